using Spindle.Engines.IoUring;

namespace Spindle.Tests.Engines;

/// <summary>
/// The io_uring thread asks to run first when it wakes (a lower nice value where the process may set one,
/// the shortest time slice where the kernel has per-thread slices); checked against what the kernel reports
/// for the thread in /proc.
/// </summary>
public class RingThreadPriorityTests
{
    [Fact]
    public void The_ring_thread_runs_at_the_nice_value_and_slice_the_kernel_reports()
    {
        if (IoUringEngine.CreatePrivate() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring thread to check.");
            return;
        }
        RingThread thread = engine.Thread;
        Assert.True(thread.ThreadId > 0);
        string task = $"/proc/self/task/{thread.ThreadId}";
        string[] stat = File.ReadAllText($"{task}/stat").Split(") ")[1].Split(' ');
        int kernelNice = int.Parse(stat[16]); // field 19 of stat; this array starts at field 3
        Assert.Equal(thread.Nice, kernelNice);

        int processNice = int.Parse(File.ReadAllText("/proc/self/stat").Split(") ")[1].Split(' ')[16]);
        Assert.True(kernelNice <= processNice, $"ring thread nice {kernelNice}, process {processNice}");
        if (Environment.UserName == "root")
        {
            // Root may lower it: ten steps, as far as -20.
            Assert.Equal(Math.Max(-20, processNice - 10), kernelNice);
        }

        string? slice = File.ReadLines($"{task}/sched").FirstOrDefault(line => line.StartsWith("se.slice", StringComparison.Ordinal));
        if (thread.ShortSlice && slice is not null)
        {
            Assert.Equal(100_000, long.Parse(slice.Split(':')[1].Trim()));
        }
    }
}
