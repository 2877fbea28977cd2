package deltaspec.spark.jvm;

import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.Map;

import org.apache.spark.SparkThrowable;
import org.apache.spark.QueryContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.CreatableRelationProvider;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.RelationProvider;
import org.apache.spark.sql.sources.SchemaRelationProvider;
import org.apache.spark.sql.sources.TableScan;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code format("deltaspec")} as a JVM data source: Spark's DataFrameWriter hands a JVM source
 * every save mode and {@code partitionBy} (PySpark's Python data sources get neither), and this
 * class hands them to deltaspec's Python writer (DeltaWriter, through {@link DeltaspecCallback}).
 * Spark refuses a Python data source named as a JVM one, so the Python data source is registered
 * as {@link #PYTHON_SOURCE} and reads go through it, after the callback resolved the snapshot
 * (its errors keep their Delta error class).
 */
public final class DeltaspecSource
    implements CreatableRelationProvider, RelationProvider, SchemaRelationProvider,
        DataSourceRegister {
  public static final String NAME = "deltaspec";
  public static final String PYTHON_SOURCE = "deltaspec_python";
  /** The read option carrying the session's time zone to the Python source. */
  public static final String SESSION_TIME_ZONE = "__session_time_zone";

  private static final String SESSION_TIME_ZONE_CONF = "spark.sql.session.timeZone";

  private static volatile DeltaspecCallback python;

  /** Called by deltaspec.spark.datasource.register with its Py4J callback. */
  public static void setCallback(DeltaspecCallback callback) {
    python = callback;
  }

  private static DeltaspecCallback python() {
    DeltaspecCallback callback = python;
    if (callback == null) {
      DeltaspecSource.<RuntimeException>raise(
          new Analysis(
              "[DELTASPEC_NOT_REGISTERED] format('deltaspec') runs deltaspec.spark's Python: call "
                  + "deltaspec.spark.datasource.register(spark) (local_session does)",
              new Details("DELTASPEC_NOT_REGISTERED", "42000", null)));
    }
    return callback;
  }

  private static void raiseIfAny(Throwable error) {
    if (error != null) {
      DeltaspecSource.<RuntimeException>raise(error);
    }
  }

  @Override
  public String shortName() {
    return NAME;
  }

  private static Map<String, String> options(scala.collection.immutable.Map<String, String> map) {
    scala.collection.immutable.Map<String, String> original =
        map instanceof CaseInsensitiveMap ? ((CaseInsensitiveMap<String>) map).originalMap() : map;
    return new HashMap<>(CollectionConverters.asJava(original));
  }

  @Override
  public BaseRelation createRelation(
      SQLContext sqlContext, scala.collection.immutable.Map<String, String> parameters) {
    return read(sqlContext, parameters, null);
  }

  @Override
  public BaseRelation createRelation(
      SQLContext sqlContext,
      scala.collection.immutable.Map<String, String> parameters,
      StructType schema) {
    return read(sqlContext, parameters, schema);
  }

  private static BaseRelation read(
      SQLContext sqlContext,
      scala.collection.immutable.Map<String, String> parameters,
      StructType schema) {
    Map<String, String> options = options(parameters);
    // the Python source resolves timestampAsOf where no session is at hand: a time without an
    // offset is in the session's time zone, which it is told here
    options.put(SESSION_TIME_ZONE, sqlContext.sparkSession().conf().get(SESSION_TIME_ZONE_CONF));
    raiseIfAny(python().checkRead(options));
    DataFrameReader reader = sqlContext.sparkSession().read().format(PYTHON_SOURCE);
    if (schema != null) {
      reader = reader.schema(schema);
    }
    return new Relation(sqlContext, reader.options(options).load());
  }

  @Override
  public BaseRelation createRelation(
      SQLContext sqlContext,
      SaveMode mode,
      scala.collection.immutable.Map<String, String> parameters,
      Dataset<Row> data) {
    raiseIfAny(python().write(mode.name(), options(parameters), data));
    return new Relation(sqlContext, data);
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void raise(Throwable error) throws T {
    throw (T) error;
  }

  /** A DataFrame as a relation: what a read returns, and what a write reports it wrote. */
  static final class Relation extends BaseRelation implements TableScan {
    private final SQLContext sqlContext;
    private final Dataset<Row> data;

    Relation(SQLContext sqlContext, Dataset<Row> data) {
      this.sqlContext = sqlContext;
      this.data = data;
    }

    @Override
    public SQLContext sqlContext() {
      return sqlContext;
    }

    @Override
    public StructType schema() {
      return data.schema();
    }

    @Override
    public RDD<Row> buildScan() {
      return data.rdd();
    }
  }

  // --- errors as PySpark converts them: AnalysisException, IllegalArgumentException, ... -------

  /**
   * The error deltaspec's Python raised, as PySpark's converter turns it into the PySpark
   * exception delta-spark raises ({@code base}: AnalysisException, IllegalArgumentException, or
   * ConcurrentModificationException for a conflict), with the Delta error class ({@code
   * getCondition()}) and SQLSTATE. {@code pythonError} names the Python exception object, which
   * deltaspec.spark's converter raises in its place.
   */
  public static Throwable error(
      String base, String condition, String sqlState, String message, String pythonError) {
    Details details = new Details(condition, sqlState, pythonError);
    switch (base) {
      case "IllegalArgumentException":
        return new IllegalArgument(message, details);
      case "ConcurrentModificationException":
        return new ConcurrentModification(message, details);
      default:
        return new Analysis(message, details);
    }
  }

  /** What an error of the Python side carries besides its message. */
  static final class Details implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    final String condition;
    final String sqlState;
    final String pythonError;

    Details(String condition, String sqlState, String pythonError) {
      this.condition = condition;
      this.sqlState = sqlState;
      this.pythonError = pythonError;
    }
  }

  /** An error raised in deltaspec's Python. */
  public interface Raised extends SparkThrowable {
    Details details();

    @Override
    default String getCondition() {
      return details().condition;
    }

    @Override
    default String getSqlState() {
      return details().sqlState;
    }

    /** The key of the Python exception object (null: none). */
    default String pythonError() {
      return details().pythonError;
    }
  }

  static final class Analysis extends AnalysisException implements Raised {
    private static final long serialVersionUID = 1L;
    private final Details details;

    Analysis(String message, Details details) {
      super(
          message,
          Option.empty(),
          Option.empty(),
          Option.empty(),
          Option.apply(details.condition),
          scala.collection.immutable.Map$.MODULE$.empty(),
          new QueryContext[0]);
      this.details = details;
    }

    @Override
    public Details details() {
      return details;
    }

    @Override
    public String getCondition() {
      return details.condition;
    }

    @Override
    public String getSqlState() {
      return details.sqlState;
    }
  }

  static final class IllegalArgument extends IllegalArgumentException implements Raised {
    private static final long serialVersionUID = 1L;
    private final Details details;

    IllegalArgument(String message, Details details) {
      super(message);
      this.details = details;
    }

    @Override
    public Details details() {
      return details;
    }
  }

  /** A conflict (delta-spark's are java.util.ConcurrentModificationException too). */
  static final class ConcurrentModification extends ConcurrentModificationException
      implements Raised {
    private static final long serialVersionUID = 1L;
    private final Details details;

    ConcurrentModification(String message, Details details) {
      super(message);
      this.details = details;
    }

    @Override
    public Details details() {
      return details;
    }
  }
}
