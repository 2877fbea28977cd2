/*
 * A bridge written from spec/bridge.md, spec/bridge/*.schema.json and spec/log-vectors.md alone
 * (it uses nothing of deltaspec): delta-kernel-java, the Delta project's Java kernel, as a reader
 * of tables on disk. build.sh beside this file builds it (into the cache) and prints its command:
 *
 *     deltaspec conformance --adapter "cmd:$(bash conformance/bridge/examples/java/build.sh)" \
 *         --suite logs --known-issues conformance/harness/known_issues/delta-kernel-java.json
 *
 * It speaks deltaspec-bridge/1: one JSON object per line on stdin, one answer per line on stdout
 * (everything else, the kernel's and Hadoop's logging included, goes to stderr). It declares
 * read_table, read_table_timestamp and log_cleanup_by_retention, served here, and actions, served
 * by KernelWrites.java with kernel's Transaction API (what kernel cannot express is answered
 * UNSUPPORTED, so those scenario vectors are skipped). A read_table reports no tombstones, app ids
 * or domains: kernel's public API lists none of them, and a reader is judged only on the keys it
 * reports.
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Table;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.exceptions.UnsupportedProtocolVersionException;
import io.delta.kernel.exceptions.UnsupportedTableFeatureException;
import io.delta.kernel.internal.TableConfig;
import io.delta.kernel.internal.actions.Protocol;
import io.delta.kernel.internal.snapshot.MetadataCleanup;
import io.delta.kernel.utils.CloseableIterator;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;

public final class DeltaKernelBridge {
  static final String PROTOCOL = "deltaspec-bridge/1";
  static final String NAME = "delta-kernel-java-" + kernelVersion();
  static final ObjectMapper JSON = new ObjectMapper();
  static final List<JsonNode> CAPABILITIES =
      List.of(
              "actions",
              "time_travel",
              "checkpoint",
              "log_cleanup",
              "checksums",
              "read_table",
              "read_rows",
              "read_table_timestamp",
              "log_cleanup_by_retention")
          .stream()
          .map(name -> (JsonNode) JSON.getNodeFactory().textNode(name))
          .toList();
  /** Paths are listed in code point order (String's compareTo orders UTF-16 units instead). */
  static final Comparator<String> CODE_POINT_ORDER =
      Comparator.comparing((String text) -> text.codePoints().toArray(), Arrays::compare);

  /**
   * The error kinds of log-vectors.md, recognised in the kernel's messages (the kernel throws a
   * plain KernelException for most of them). The first marker found in the message, or in one of
   * its causes', names the kind; the order matters where two could match.
   */
  static final String[][] KINDS = {
    {"as the transaction log has been truncated", "VERSION_NOT_FOUND"},
    {"as it does not exist", "VERSION_NOT_FOUND"},
    {"is before the earliest available version", "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"},
    {"is after the latest available version", "TIMESTAMP_GREATER_THAN_COMMIT"},
    {"versions are not contiguous", "VERSIONS_NOT_CONTIGUOUS"},
    {"missing delta file", "VERSIONS_NOT_CONTIGUOUS"},
    {"no protocol found", "MISSING_PROTOCOL_OR_METADATA"},
    {"no metadata found", "MISSING_PROTOCOL_OR_METADATA"},
    {"not a regular file", "NOT_REGULAR_FILE"},
    {"is a directory", "NOT_REGULAR_FILE"},
    {"unsupported delta data type", "UNSUPPORTED_FEATURE"}, // a type kernel does not read: declined
    {"could not parse json", "CORRUPT_LOG_FILE"},
    {"jsonparseexception", "CORRUPT_LOG_FILE"},
    {"urisyntaxexception", "UNSAFE_PATH"}, // a data path that is no URI: it names no file
    {"failed to parse", "CORRUPT_LOG_FILE"},
    {"unexpected character", "CORRUPT_LOG_FILE"},
  };

  public static void main(String[] args) throws Exception {
    // stdout carries the protocol only: anything a library prints goes to stderr
    PrintStream out =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err);
    Engine engine = DefaultEngine.create(new Configuration());
    KernelWrites writes = new KernelWrites(engine);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.isBlank()) {
        continue;
      }
      out.print(JSON.writeValueAsString(answer(engine, writes, line)) + "\n");
      out.flush();
    }
  }

  static ObjectNode answer(Engine engine, KernelWrites writes, String line) {
    ObjectNode response = JSON.createObjectNode();
    JsonNode request;
    try {
      request = JSON.readTree(line);
    } catch (Exception error) {
      response.putNull("id");
      return failed(response, "BAD_REQUEST", "not JSON: " + error.getMessage());
    }
    response.set("id", request.get("id"));
    String method = request.path("method").asText();
    JsonNode params = request.path("params");
    try {
      switch (method) {
        case "hello":
          ObjectNode hello = response.putObject("result");
          hello.put("protocol", PROTOCOL);
          hello.put("name", NAME);
          hello.putArray("capabilities").addAll(CAPABILITIES);
          return response;
        case "read_table":
          response.set("result", readTable(engine, params));
          return response;
        case "read_rows":
          response.set("result", readRows(engine, params));
          return response;
        case "clean_up_expired_logs":
          response.set("result", cleanUpExpiredLogs(engine, params.path("path").asText()));
          return response;
        case "create":
          writes.create(params.path("setup"));
          response.putNull("result");
          return response;
        case "begin":
          writes.now = params.path("now").asLong(writes.now);
          String writer = params.path("writer").asText();
          response.set(
              "result", writes.begin(writer, params.path("spec"), params.path("version")));
          return response;
        case "read":
          writes.read(params.path("writer").asText(), params.path("read"));
          response.putNull("result");
          return response;
        case "stage":
          writes.now = params.path("now").asLong(writes.now);
          writes.stage(params.path("writer").asText(), params.path("actions"), writes.now);
          response.putNull("result");
          return response;
        case "commit":
          writes.now = params.path("now").asLong(writes.now);
          response.set("result", writes.commit(params.path("writer").asText()));
          return response;
        case "checkpoint":
          writes.now = params.path("now").asLong(writes.now);
          writes.checkpoint(params.path("version").asLong());
          response.putNull("result");
          return response;
        case "snapshot":
          response.set("result", writes.snapshot(params.path("version")));
          return response;
        case "checkpoints":
          ArrayNode versions = response.putArray("result");
          writes.checkpoints().forEach(versions::add);
          return response;
        case "clean_up_log":
          writes.cleanUpLog(params.path("version").asLong());
          response.putNull("result");
          return response;
        case "checksum":
          response.set("result", writes.checksum(params.path("version").asLong()));
          return response;
        case "verify":
          response.putArray("result"); // kernel has no checks of a stored log to report
          return response;
        case "close":
          writes.close();
          response.putNull("result");
          return response;
        default:
          return failed(response, "UNSUPPORTED", method + ": not a capability of this bridge");
      }
    } catch (KernelWrites.Unsupported declined) {
      return failed(response, "UNSUPPORTED", declined.getMessage());
    } catch (KernelWrites.BadRequest malformed) {
      return failed(response, "BAD_REQUEST", malformed.getMessage());
    } catch (Exception | LinkageError error) { // the bridge's own failure, not the kernel's
      return failed(response, "INTERNAL", describe(error));
    }
  }

  static ObjectNode failed(ObjectNode response, String kind, String message) {
    ObjectNode error = response.putObject("error");
    error.put("kind", kind);
    error.put("message", message);
    return response;
  }

  /** The snapshot JSON of spec/bridge.md for `read_table`, or an error of log-vectors.md. */
  static ObjectNode readTable(Engine engine, JsonNode params) throws Exception {
    String path = params.path("path").asText();
    JsonNode version = params.path("version");
    JsonNode timestamp = params.path("timestamp");
    Snapshot snapshot;
    List<Row> files;
    try {
      snapshot = open(engine, path, version, timestamp);
      files = liveFiles(engine, snapshot); // the kernel replays the log lazily: errors show here
    } catch (TableNotFoundException error) {
      if (version.isNull() && !timestamp.isIntegralNumber()) { // the latest of no table: empty
        ObjectNode empty = JSON.createObjectNode();
        empty.put("version", -1);
        empty.putArray("files");
        return empty;
      }
      return readError("TABLE_NOT_FOUND", error);
    } catch (Exception | StackOverflowError error) {
      return readError(classify(error), error);
    }
    return snapshotJson(snapshot, files);
  }

  /** The snapshot a read_table or read_rows asks for: latest, by version or by timestamp. */
  static Snapshot open(Engine engine, String path, JsonNode version, JsonNode timestamp) {
    Table table = Table.forPath(engine, path);
    if (timestamp.isIntegralNumber()) {
      return table.getSnapshotAsOfTimestamp(engine, timestamp.asLong());
    } else if (version.isIntegralNumber()) {
      return table.getSnapshotAsOfVersion(engine, version.asLong());
    }
    return table.getLatestSnapshot(engine);
  }

  /** The rows of spec/bridge.md ("Rows in JSON") for `read_rows`, or an error of log-vectors.md. */
  static ObjectNode readRows(Engine engine, JsonNode params) {
    try {
      String path = params.path("path").asText();
      Snapshot snapshot = open(engine, path, params.path("version"), params.path("timestamp"));
      return KernelRows.rows(engine, snapshot);
    } catch (Exception | StackOverflowError error) {
      return readError(classify(error), error);
    }
  }

  /**
   * The log cleanup a kernel writer runs right after it writes a checkpoint (its Checkpointer):
   * on the latest snapshot, when delta.enableExpiredLogCleanup holds and the table has no
   * checkpointProtection writer feature, MetadataCleanup.cleanupExpiredLogs with the wall clock
   * and delta.logRetentionDuration. Kernel has no public call for it: these are its internal
   * classes, as its own checkpoint path uses them. null, or an error of log-vectors.md.
   */
  static ObjectNode cleanUpExpiredLogs(Engine engine, String path) {
    try {
      Snapshot latest = Table.forPath(engine, path).getLatestSnapshot(engine);
      Map<String, String> properties = latest.getTableProperties();
      boolean enabled = TableConfig.EXPIRED_LOG_CLEANUP_ENABLED.fromMetadata(properties);
      boolean protectedCheckpoints =
          latest.getProtocol().getWriterFeatures().contains("checkpointProtection");
      if (enabled && !protectedCheckpoints) {
        long retention = TableConfig.LOG_RETENTION.fromMetadata(properties);
        MetadataCleanup.cleanupExpiredLogs(
            engine, System::currentTimeMillis, latest.getDataPath(), retention);
      }
      return null;
    } catch (Exception | StackOverflowError error) {
      return readError(classify(error), error);
    }
  }

  /** The scan files of the snapshot: one row per live logical file (its `add` struct). */
  static List<Row> liveFiles(Engine engine, Snapshot snapshot) throws Exception {
    List<Row> adds = new ArrayList<>();
    Scan scan = snapshot.getScanBuilder().build();
    try (CloseableIterator<FilteredColumnarBatch> batches = scan.getScanFiles(engine)) {
      while (batches.hasNext()) {
        try (CloseableIterator<Row> rows = batches.next().getRows()) {
          while (rows.hasNext()) {
            Row row = rows.next();
            adds.add(row.getStruct(row.getSchema().indexOf("add")));
          }
        }
      }
    }
    return adds;
  }

  static ObjectNode snapshotJson(Snapshot snapshot, List<Row> adds) {
    ObjectNode result = JSON.createObjectNode();
    result.put("version", snapshot.getVersion());
    List<String> paths = new ArrayList<>();
    TreeMap<String, Long[]> rowIds = new TreeMap<>();
    for (Row add : adds) {
      String path = add.getString(add.getSchema().indexOf("path"));
      paths.add(path);
      Long base = longField(add, "baseRowId");
      rowIds.put(path, new Long[] {base, longField(add, "defaultRowCommitVersion")});
    }
    paths.sort(CODE_POINT_ORDER);
    ArrayNode files = result.putArray("files");
    paths.forEach(files::add);
    ObjectNode ids = result.putObject("row_ids");
    for (Map.Entry<String, Long[]> entry : rowIds.entrySet()) {
      ArrayNode pair = ids.putArray(entry.getKey());
      for (Long value : entry.getValue()) {
        if (value == null) {
          pair.addNull();
        } else {
          pair.add(value);
        }
      }
    }
    ObjectNode properties = result.putObject("properties");
    new TreeMap<>(snapshot.getTableProperties()).forEach(properties::put);
    ArrayNode partitions = result.putArray("partition_columns");
    snapshot.getPartitionColumnNames().forEach(partitions::add);
    result.set("protocol", protocolJson(snapshot.getProtocol()));
    return result;
  }

  /** minReaderVersion, minWriterVersion and, where the versions carry them, the sorted features. */
  static ObjectNode protocolJson(Protocol protocol) {
    ObjectNode shape = JSON.createObjectNode();
    shape.put("minReaderVersion", protocol.getMinReaderVersion());
    shape.put("minWriterVersion", protocol.getMinWriterVersion());
    if (protocol.supportsReaderFeatures()) {
      ArrayNode features = shape.putArray("readerFeatures");
      new TreeSet<>(protocol.getReaderFeatures()).forEach(features::add);
    }
    if (protocol.supportsWriterFeatures()) {
      ArrayNode features = shape.putArray("writerFeatures");
      new TreeSet<>(protocol.getWriterFeatures()).forEach(features::add);
    }
    return shape;
  }

  static Long longField(Row row, String name) {
    int at;
    try {
      at = row.getSchema().indexOf(name);
    } catch (RuntimeException absent) {
      return null;
    }
    return at < 0 || row.isNullAt(at) ? null : row.getLong(at);
  }

  static ObjectNode readError(String kind, Throwable error) {
    ObjectNode result = JSON.createObjectNode();
    result.put("error", kind);
    result.put("message", describe(error));
    return result;
  }

  /** A kernel failure as a log-vectors.md kind: by its class, else by KINDS, else INTERNAL. */
  static String classify(Throwable error) {
    if (error instanceof UnsupportedTableFeatureException) {
      return "UNSUPPORTED_FEATURE";
    }
    if (error instanceof UnsupportedProtocolVersionException) {
      return "UNSUPPORTED_PROTOCOL";
    }
    if (error instanceof TableNotFoundException) {
      return "TABLE_NOT_FOUND";
    }
    for (Throwable at = error; at != null; at = at.getCause() == at ? null : at.getCause()) {
      String text = at.getClass().getSimpleName() + ": " + at.getMessage();
      text = text.toLowerCase(Locale.ROOT);
      for (String[] kind : KINDS) {
        if (text.contains(kind[0])) {
          return kind[1];
        }
      }
    }
    return "INTERNAL";
  }

  /** The exception and its causes, class and message each, within 2000 characters. */
  static String describe(Throwable error) {
    StringBuilder text = new StringBuilder();
    for (Throwable at = error; at != null; at = at.getCause() == at ? null : at.getCause()) {
      if (text.length() > 0) {
        text.append(" <- ");
      }
      text.append(at.getClass().getName()).append(": ").append(at.getMessage());
    }
    return text.length() > 2000 ? text.substring(0, 2000) : text.toString();
  }

  static String kernelVersion() {
    String version = Table.class.getPackage().getImplementationVersion();
    return version == null ? "unknown" : version;
  }
}
