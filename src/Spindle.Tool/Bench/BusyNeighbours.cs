using System.Diagnostics;

namespace Spindle.Tool.Bench;

/// <summary>
/// CPU-bound processes running beside a measured row (<c>spindle bench --busy N</c>): each a shell busy loop, so
/// that the row competes for the cores as it would on a loaded server. They go when disposed; a shell watching its
/// standard input ends its loop when this process ends any other way (killed, crashed), as the pipe then closes.
/// </summary>
public sealed class BusyNeighbours : IDisposable
{
    // The loop runs in the background; `read` returns when the pipe from this process closes, and the loop goes with it.
    private const string Script = "while :; do :; done & read -r _; kill $!";

    private readonly List<Process> _processes = [];

    /// <summary>Starts <paramref name="count"/> busy processes (none for 0).</summary>
    public BusyNeighbours(int count)
    {
        try
        {
            for (int i = 0; i < count; i++)
            {
                var start = new ProcessStartInfo("/bin/sh") { UseShellExecute = false, RedirectStandardInput = true };
                start.ArgumentList.Add("-c");
                start.ArgumentList.Add(Script);
                _processes.Add(Process.Start(start) ?? throw new InvalidOperationException("/bin/sh did not start"));
            }
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    /// <summary>The process ids of the shells (each with its loop as a child).</summary>
    public IReadOnlyList<int> ProcessIds => _processes.Select(p => p.Id).ToList();

    /// <summary>Stops every busy process and waits until it is gone.</summary>
    public void Dispose()
    {
        foreach (Process process in _processes)
        {
            try
            {
                process.Kill(entireProcessTree: true);
                process.WaitForExit();
            }
            catch (InvalidOperationException)
            {
                // Already gone.
            }
            process.Dispose();
        }
        _processes.Clear();
    }
}
