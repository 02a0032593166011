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
        size, the time and the throughput. As with cp, when DST is a directory (or ends with /) the
        copy goes into it under SRC's name. Ctrl-C or SIGTERM stops the copy and removes the partial
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
        bool overwrite = line.Has("--overwrite");
        if (Directory.Exists(source))
        {
            throw new ToolException($"source is a directory: {source}");
        }
        if (!File.Exists(source))
        {
            throw new ToolException($"source not found: {source}");
        }
        destination = Destination(source, destination);
        if (Directory.Exists(destination))
        {
            throw new ToolException($"destination is a directory: {destination}");
        }
        if (!overwrite && File.Exists(destination))
        {
            throw new ToolException($"destination exists: {destination} (--overwrite replaces it)");
        }
        long length = new FileInfo(source).Length;
        var progress = console.Progress();
        var reporter = new SynchronousProgress(copied => progress.Report(copied, length, $"{Units.Bytes(copied)} of {Units.Bytes(length)}"));
        var clock = Stopwatch.StartNew();
        try
        {
            SpindleFile.CopyAsync(source, destination, overwrite, reporter, console.Cancellation).GetAwaiter().GetResult();
        }
        catch (FileNotFoundException)
        {
            throw new ToolException($"source not found: {source}");
        }
        catch (DirectoryNotFoundException)
        {
            throw new ToolException($"destination directory not found: {Path.GetDirectoryName(destination)}");
        }
        catch (IOException e) when (e.HResult == Eexist && !overwrite)
        {
            // Created by someone else between the check above and the copy.
            throw new ToolException($"destination exists: {destination} (--overwrite replaces it)");
        }
        catch (IOException e)
        {
            throw new ToolException($"copying {source} to {destination} failed: {e.Message}");
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

    private const int Eexist = 17;   // errno of an existing destination; Spindle's IOException carries it as HResult, as System.IO's does

    /// <summary>
    /// Where the copy goes, by cp's rule: into <paramref name="destination"/> under the source's name when it is
    /// an existing directory or ends with a slash (then it must be a directory: a missing one is an error).
    /// </summary>
    public static string Destination(string source, string destination)
    {
        bool slash = destination.EndsWith('/');
        if (Directory.Exists(destination))
        {
            return Path.Combine(destination, Path.GetFileName(source));
        }
        if (slash)
        {
            throw new ToolException($"destination directory not found: {destination}");
        }
        return destination;
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
