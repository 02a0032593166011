using Microsoft.Win32.SafeHandles;

namespace Spindle.Tests.Engines;

/// <summary>
/// Reads of character devices return what System.IO's <c>read(2)</c> returns. <c>/dev/zero</c> fills
/// the whole buffer for a blocking read, but stops after a page when asked not to block and the CPU is
/// wanted elsewhere (<c>need_resched</c>), which is how io_uring first tries a read; io_uring passes that
/// short count on for anything but regular files and block devices.
/// </summary>
public class CharacterDeviceTests
{
    private const int Reads = 1000;
    private const int Size = 1 << 20;

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task Reads_of_dev_zero_fill_the_buffer_like_System_IO_even_when_the_CPU_is_busy(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using SafeFileHandle handle = File.OpenHandle("/dev/zero", FileMode.Open, FileAccess.Read, FileShare.ReadWrite, FileOptions.Asynchronous);
        byte[] buffer = new byte[Size];
        // Busy threads make the kernel's need_resched likely during a read, the condition that cuts
        // short a non-blocking read of /dev/zero. They only raise the odds of exposing a difference:
        // the outcome asserted is the same with or without them.
        using var stop = new CancellationTokenSource();
        Thread[] spinners = Enumerable.Range(0, Environment.ProcessorCount)
            .Select(_ => new Thread(() => { while (!stop.IsCancellationRequested) { Thread.SpinWait(1000); } }) { IsBackground = true })
            .ToArray();
        foreach (Thread spinner in spinners)
        {
            spinner.Start();
        }
        var system = new List<int>();
        var spindle = new List<int>();
        try
        {
            for (int i = 0; i < Reads; i++)
            {
                int expected = await System.IO.RandomAccess.ReadAsync(handle, buffer, 0);
                int actual = await SpindleRandomAccess.ReadAsync(handle, buffer, 0, engine);
                if (expected != Size) system.Add(expected);
                if (actual != Size) spindle.Add(actual);
            }
        }
        finally
        {
            stop.Cancel();
            foreach (Thread spinner in spinners)
            {
                spinner.Join();
            }
        }
        // System.IO's blocking read(2) is itself cut short now and then (the kernel stops a /dev/zero read when the
        // thread has a signal pending, as the runtime's own signals may make it): the defect this guards against, the
        // ring's non-blocking first attempt, cut most reads short where System.IO cut none or a few.
        Assert.True(spindle.Count <= system.Count,
            $"short reads of {Size} bytes among {Reads}: System.IO [{string.Join(", ", system)}], Spindle [{string.Join(", ", spindle)}]");
    }
}
