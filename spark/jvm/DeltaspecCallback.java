package deltaspec.spark.jvm;

import java.util.Map;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * deltaspec's Python side of {@code format("deltaspec")}: a Py4J callback implemented by
 * deltaspec.spark.datasource and registered with {@link DeltaspecSource#setCallback}. Each method
 * returns null, or the error to raise to the user (made by {@link DeltaspecSource#error}).
 */
public interface DeltaspecCallback {
  /**
   * Writes {@code data} with Spark's save mode name ({@code "ErrorIfExists"}, {@code "Append"},
   * ...) and the writer's options as given ({@code __partition_columns} holds partitionBy's
   * columns as a JSON array), through deltaspec's DeltaWriter.
   */
  Throwable write(String mode, Map<String, String> options, Dataset<Row> data);

  /** Resolves the snapshot a read's options name (the table, versionAsOf, timestampAsOf). */
  Throwable checkRead(Map<String, String> options);
}
