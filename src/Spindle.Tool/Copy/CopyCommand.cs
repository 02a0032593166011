using System.Diagnostics;
using System.Globalization;
using Spindle.Workloads;
using Spindle.Tool.Cli;

namespace Spindle.Tool.Copy;

/// <summary><c>spindle copy SRC DST</c>: <see cref="SpindleFile.CopyAsync"/> with a progress bar and a throughput line.</summary>
public sealed class CopyCommand : ICommand
{
    /// <inheritdoc />
    public string Name => "copy";

    /// <inheritdoc />
    public string Summary => "copy a file fast (copy_file_range where the kernel can), with progress";

    /// <inheritdoc />
    public string Help => """
        usage: spindle copy SRC DST [--overwrite]

        Copies the file SRC to DST with SpindleFile.CopyAsync (copy_file_range in the kernel where
        the file systems allow it, preallocated destination), shows a progress bar and ends with the
        size, the time and the throughput. Ctrl-C or SIGTERM stops the copy and removes the partial
        DST (exit code 130 or 143).

          --overwrite   replace DST if it exists (otherwise an existing DST is an error)
        """;

    private static readonly string[] Switches = ["--overwrite"];

    /// <inheritdoc />
    public int Run(IReadOnlyList<string> args, ToolConsole console)
    {
        Arguments line = Arguments.Parse(args, [], Switches);
        if (line.Help)
        {
            console.Out.WriteLine(Help);
            return 0;
        }
        if (line.Positional.Count != 2)
        {
            throw new UsageException(line.Positional.Count < 2 ? "needs a source and a destination" : $"unexpected argument: {line.Positional[2]}");
        }
        string source = line.Positional[0], destination = line.Positional[1];
        if (Directory.Exists(source))
        {
            throw new ToolException($"source is a directory: {source}");
        }
        if (!File.Exists(source))
        {
            throw new ToolException($"source not found: {source}");
        }
        long length = new FileInfo(source).Length;
        var progress = console.Progress();
        var reporter = new SynchronousProgress(copied => progress.Report(copied, length, $"{Units.Bytes(copied)} of {Units.Bytes(length)}"));
        var clock = Stopwatch.StartNew();
        try
        {
            SpindleFile.CopyAsync(source, destination, line.Has("--overwrite"), reporter, console.Cancellation).GetAwaiter().GetResult();
        }
        catch (FileNotFoundException)
        {
            throw new ToolException($"source not found: {source}");
        }
        catch (IOException) when (!line.Has("--overwrite") && File.Exists(destination))
        {
            throw new ToolException($"destination exists: {destination} (--overwrite replaces it)");
        }
        catch (UnauthorizedAccessException e)
        {
            throw new ToolException($"permission denied: {e.Message}");
        }
        finally
        {
            progress.Clear();
        }
        clock.Stop();
        double seconds = Math.Max(clock.Elapsed.TotalSeconds, 1e-9);
        console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"copied {Units.Bytes(length)} ({length} bytes) in {clock.Elapsed.TotalSeconds:0.000} s, {length / seconds / Units.MiB:0.0} MiB/s"));
        return 0;
    }

    // Progress<T> posts to the thread pool and can report after the copy ended; this reports in place.
    private sealed class SynchronousProgress(Action<long> report) : IProgress<long>
    {
        private long _last = -1; // the last value shown, so that identical reports do not redraw

        public void Report(long value)
        {
            if (Interlocked.Exchange(ref _last, value) != value)
            {
                report(value);
            }
        }
    }
}
