package deltaspec.spark.jvm;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.FileNameSpec;
import org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol;

import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A commit protocol that writes each data file at its final name, as delta-spark's
 * DelayedCommitProtocol does: {@code <table>/<partition directories>/part-<task>-<uuid><ext>},
 * no {@code _temporary} directory and no rename (on an object store a rename is a copy). A task
 * reports its files' relative paths, sizes and modification times; the job's list is kept for
 * the driver's Python side, which takes it with {@link #takeFiles} and commits it to the log.
 *
 * <p>A write is deltaspec's when its options name a write id ({@value #WRITE_ID}); any other write
 * of the session is handed to Spark's own protocol unchanged, so the session conf that selects
 * this class ({@code spark.sql.sources.commitProtocolClass}) changes nothing else.
 */
public class DeltaspecCommitProtocol extends FileCommitProtocol implements Serializable {
  private static final long serialVersionUID = 1L;
  public static final String WRITE_ID = "deltaspec.writeId";
  private static final Map<String, List<String[]>> COMMITTED = new ConcurrentHashMap<>();

  private final String path;
  private final FileCommitProtocol spark;
  private String writeId;
  private transient List<String> taskFiles;

  public DeltaspecCommitProtocol(String jobId, String path, boolean dynamicPartitionOverwrite) {
    this.path = path;
    this.spark = new SQLHadoopMapReduceCommitProtocol(jobId, path, dynamicPartitionOverwrite);
  }

  /** The files the write {@code writeId} committed ({relative path, size, mtime ms}), once. */
  public static List<String[]> takeFiles(String writeId) {
    return COMMITTED.remove(writeId);
  }

  private boolean ours() {
    return writeId != null;
  }

  @Override
  public void setupJob(JobContext job) {
    writeId = job.getConfiguration().get(WRITE_ID);
    if (!ours()) {
      spark.setupJob(job);
    }
  }

  @Override
  public void setupTask(TaskAttemptContext task) {
    if (ours()) {
      taskFiles = new ArrayList<>();
    } else {
      spark.setupTask(task);
    }
  }

  private String newFile(TaskAttemptContext task, Option<String> dir, String prefix, String ext) {
    String name = String.format(
        "%spart-%05d-%s%s", prefix, task.getTaskAttemptID().getTaskID().getId(),
        UUID.randomUUID(), ext);
    String relative = dir.isDefined() ? dir.get() + "/" + name : name;
    taskFiles.add(relative);
    return new Path(path, relative).toString();
  }

  @Override
  public String newTaskTempFile(TaskAttemptContext task, Option<String> dir, String ext) {
    return ours() ? newFile(task, dir, "", ext) : spark.newTaskTempFile(task, dir, ext);
  }

  @Override
  public String newTaskTempFile(TaskAttemptContext task, Option<String> dir, FileNameSpec spec) {
    return ours()
        ? newFile(task, dir, spec.prefix(), spec.suffix())
        : spark.newTaskTempFile(task, dir, spec);
  }

  @Override
  public String newTaskTempFileAbsPath(TaskAttemptContext task, String dir, String ext) {
    if (ours()) {
      throw new UnsupportedOperationException("a Delta table writes no file outside its root");
    }
    return spark.newTaskTempFileAbsPath(task, dir, ext);
  }

  @Override
  public String newTaskTempFileAbsPath(TaskAttemptContext task, String dir, FileNameSpec spec) {
    if (ours()) {
      throw new UnsupportedOperationException("a Delta table writes no file outside its root");
    }
    return spark.newTaskTempFileAbsPath(task, dir, spec);
  }

  @Override
  public TaskCommitMessage commitTask(TaskAttemptContext task) {
    if (!ours()) {
      return spark.commitTask(task);
    }
    ArrayList<String[]> written = new ArrayList<>();
    try {
      Path root = new Path(path);
      FileSystem fs = root.getFileSystem(task.getConfiguration());
      for (String relative : taskFiles) {
        FileStatus status = fs.getFileStatus(new Path(root, relative));
        written.add(new String[] {
          relative, Long.toString(status.getLen()), Long.toString(status.getModificationTime())
        });
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new TaskCommitMessage(written);
  }

  @Override
  public void abortTask(TaskAttemptContext task) {
    if (!ours()) {
      spark.abortTask(task);
      return;
    }
    try {  // the files of a failed attempt are never committed: delete what is there
      Path root = new Path(path);
      FileSystem fs = root.getFileSystem(task.getConfiguration());
      for (String relative : taskFiles == null ? List.<String>of() : taskFiles) {
        fs.delete(new Path(root, relative), false);
      }
    } catch (IOException e) {
      // best effort: an uncommitted file is invisible to readers, VACUUM deletes it later
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public void commitJob(JobContext job, Seq<TaskCommitMessage> commits) {
    if (!ours()) {
      spark.commitJob(job, commits);
      return;
    }
    List<String[]> files = new ArrayList<>();
    for (TaskCommitMessage commit : CollectionConverters.asJava(commits)) {
      files.addAll((List<String[]>) commit.obj());
    }
    COMMITTED.put(writeId, files);
  }

  @Override
  public void abortJob(JobContext job) {
    if (!ours()) {
      spark.abortJob(job);
    }
  }

  @Override
  public void onTaskCommit(TaskCommitMessage message) {
    if (!ours()) {
      spark.onTaskCommit(message);
    }
  }

  @Override
  public boolean deleteWithJob(FileSystem fs, Path target, boolean recursive) {
    try {
      return ours() ? fs.delete(target, recursive) : spark.deleteWithJob(fs, target, recursive);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
