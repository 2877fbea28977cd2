/*
 * The rows half of the Java bridge, written from spec/bridge.md ("Rows in JSON") alone: a
 * snapshot's rows as delta-kernel-java reads them, the way kernel's own examples do
 * (SingleThreadedTableReader): the scan files of Scan.getScanFiles, each read by the engine's
 * ParquetHandler in the physical read schema, then Scan.transformPhysicalData (partition values,
 * column mapping, deletion vectors as a selection vector) to the logical rows; each value written
 * by the Delta type of its column.
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.data.ArrayValue;
import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.MapValue;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.UnsupportedTableFeatureException;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.data.ScanStateRow;
import io.delta.kernel.types.ArrayType;
import io.delta.kernel.types.BinaryType;
import io.delta.kernel.types.BooleanType;
import io.delta.kernel.types.ByteType;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.DateType;
import io.delta.kernel.types.DecimalType;
import io.delta.kernel.types.DoubleType;
import io.delta.kernel.types.FloatType;
import io.delta.kernel.types.IntegerType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.MapType;
import io.delta.kernel.types.ShortType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.types.TimestampNTZType;
import io.delta.kernel.types.TimestampType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

final class KernelRows {
  static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private KernelRows() {}

  /** {"columns": [...], "rows": [[...], ...]} of the snapshot's logical schema. */
  static ObjectNode rows(Engine engine, Snapshot snapshot) throws Exception {
    ObjectNode result = DeltaKernelBridge.JSON.createObjectNode();
    StructType schema = snapshot.getSchema();
    ArrayNode columns = result.putArray("columns");
    schema.fields().forEach(field -> columns.add(field.getName()));
    ArrayNode rows = result.putArray("rows");
    Scan scan = snapshot.getScanBuilder().build();
    Row scanState = scan.getScanState(engine);
    StructType physical = ScanStateRow.getPhysicalDataReadSchema(scanState);
    try (CloseableIterator<FilteredColumnarBatch> files = scan.getScanFiles(engine)) {
      while (files.hasNext()) {
        try (CloseableIterator<Row> scanFiles = files.next().getRows()) {
          while (scanFiles.hasNext()) {
            Row scanFile = scanFiles.next();
            FileStatus file = InternalScanFileUtils.getAddFileStatus(scanFile);
            CloseableIterator<ColumnarBatch> data =
                engine
                    .getParquetHandler()
                    .readParquetFiles(
                        KernelWrites.iterator(List.of(file)), physical, Optional.empty())
                    .map(read -> read.getData());
            try (CloseableIterator<FilteredColumnarBatch> logical =
                Scan.transformPhysicalData(engine, scanState, scanFile, data)) {
              while (logical.hasNext()) {
                add(rows, logical.next(), schema);
              }
            }
          }
        }
      }
    }
    return result;
  }

  static void add(ArrayNode rows, FilteredColumnarBatch filtered, StructType schema) {
    ColumnarBatch batch = filtered.getData();
    Optional<ColumnVector> selected = filtered.getSelectionVector();
    StructType read = batch.getSchema();
    for (int row = 0; row < batch.getSize(); row++) {
      if (selected.isPresent()
          && (selected.get().isNullAt(row) || !selected.get().getBoolean(row))) {
        continue; // deleted by a deletion vector
      }
      ArrayNode values = rows.addArray();
      for (StructField field : schema.fields()) {
        int at = read.indexOf(field.getName());
        DataType type = field.getDataType();
        values.add(at < 0 ? NODES.nullNode() : value(batch.getColumnVector(at), row, type));
      }
    }
  }

  /** One value by its Delta type (spec/bridge.md, "Rows in JSON"). */
  static JsonNode value(ColumnVector vector, int row, DataType type) {
    if (vector.isNullAt(row)) {
      return NODES.nullNode();
    }
    if (type instanceof BooleanType) {
      return NODES.booleanNode(vector.getBoolean(row));
    } else if (type instanceof ByteType) {
      return NODES.numberNode(vector.getByte(row));
    } else if (type instanceof ShortType) {
      return NODES.numberNode(vector.getShort(row));
    } else if (type instanceof IntegerType || type instanceof DateType) {
      return NODES.numberNode(vector.getInt(row)); // a date: days since 1970-01-01
    } else if (type instanceof LongType
        || type instanceof TimestampType
        || type instanceof TimestampNTZType) {
      return NODES.numberNode(vector.getLong(row)); // a timestamp: microseconds
    } else if (type instanceof FloatType) {
      return number(vector.getFloat(row));
    } else if (type instanceof DoubleType) {
      return number(vector.getDouble(row));
    } else if (type instanceof DecimalType) {
      return NODES.textNode(vector.getDecimal(row).toPlainString());
    } else if (type instanceof StringType) {
      return NODES.textNode(vector.getString(row));
    } else if (type instanceof BinaryType) {
      return NODES.textNode(Base64.getEncoder().encodeToString(vector.getBinary(row)));
    } else if (type instanceof StructType) {
      ObjectNode struct = NODES.objectNode();
      List<StructField> fields = ((StructType) type).fields();
      for (int i = 0; i < fields.size(); i++) {
        StructField field = fields.get(i);
        struct.set(field.getName(), value(vector.getChild(i), row, field.getDataType()));
      }
      return struct;
    } else if (type instanceof ArrayType) {
      ArrayValue array = vector.getArray(row);
      ArrayNode out = NODES.arrayNode();
      for (int i = 0; i < array.getSize(); i++) {
        out.add(value(array.getElements(), i, ((ArrayType) type).getElementType()));
      }
      return out;
    } else if (type instanceof MapType) {
      MapValue map = vector.getMap(row);
      ArrayNode out = NODES.arrayNode();
      for (int i = 0; i < map.getSize(); i++) {
        ArrayNode pair = out.addArray();
        pair.add(value(map.getKeys(), i, ((MapType) type).getKeyType()));
        pair.add(value(map.getValues(), i, ((MapType) type).getValueType()));
      }
      return out;
    }
    throw new UnsupportedTableFeatureException( // declined: UNSUPPORTED_FEATURE
        null, type.toString(), "unsupported delta data type for rows: " + type);
  }

  static JsonNode number(double value) {
    if (Double.isNaN(value)) {
      return NODES.textNode("NaN");
    } else if (Double.isInfinite(value)) {
      return NODES.textNode(value > 0 ? "Infinity" : "-Infinity");
    }
    return NODES.numberNode(value);
  }

  static JsonNode number(float value) {
    if (Float.isNaN(value) || Float.isInfinite(value)) {
      return number((double) value);
    }
    return NODES.numberNode(value);
  }
}
