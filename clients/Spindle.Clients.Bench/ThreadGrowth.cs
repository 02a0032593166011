using System.Diagnostics;
using System.Globalization;

namespace Spindle.Clients.Bench;

/// <summary>
/// A server's thread count through one phase (<c>/proc/&lt;pid&gt;/status</c>, every 20 ms): at the start, at the end,
/// and how long it took to grow by 90% of what it grew. Garnet holds a pool thread per waiting session, so this shows how
/// fast the thread pool grew to hold them, which decides a short phase's first second.
/// </summary>
internal sealed class ThreadGrowth : IDisposable
{
    private const int IntervalMilliseconds = 20;

    private readonly int _pid;
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly List<(double Seconds, int Threads)> _samples = [];
    private readonly Thread _sampler;
    private volatile bool _stopped;

    public ThreadGrowth(int pid)
    {
        _pid = pid;
        _sampler = new Thread(SampleUntilStopped) { IsBackground = true, Name = "thread growth" };
        _sampler.Start();
    }

    /// <summary>"threads 36→112, 90% of the growth at 0.62 s" (or "threads 36, no growth").</summary>
    public string Summary()
    {
        Dispose();
        if (_samples.Count == 0)
        {
            return "threads ?";
        }
        int first = _samples[0].Threads;
        int most = _samples.Max(s => s.Threads);
        if (most <= first)
        {
            return string.Create(CultureInfo.InvariantCulture, $"threads {first}, no growth");
        }
        double target = first + (0.9 * (most - first));
        double reached = _samples.First(s => s.Threads >= target).Seconds - _samples[0].Seconds;
        return string.Create(CultureInfo.InvariantCulture, $"threads {first}→{_samples[^1].Threads}, 90% of the growth at {reached:F2} s");
    }

    public void Dispose()
    {
        _stopped = true;
        _sampler.Join();
    }

    private void SampleUntilStopped()
    {
        while (!_stopped)
        {
            if (Threads() is int threads)
            {
                _samples.Add((_clock.Elapsed.TotalSeconds, threads));
            }
            Thread.Sleep(IntervalMilliseconds);
        }
    }

    private int? Threads()
    {
        try
        {
            foreach (string line in File.ReadLines($"/proc/{_pid}/status"))
            {
                if (line.StartsWith("Threads:", StringComparison.Ordinal))
                {
                    return int.Parse(line["Threads:".Length..].Trim(), CultureInfo.InvariantCulture);
                }
            }
        }
        catch (IOException)
        {
            // The server exited; the phase reports it.
        }
        return null;
    }
}
