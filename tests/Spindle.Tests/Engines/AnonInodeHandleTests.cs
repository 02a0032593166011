using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;

namespace Spindle.Tests.Engines;

/// <summary>
/// Handles on anonymous inodes (eventfd, timerfd, inotify, signalfd) have no file type in their mode: a read
/// on them waits for an event, like a pipe's, and must never block the caller of an asynchronous read.
/// </summary>
public partial class AnonInodeHandleTests
{
    private const int EFD_CLOEXEC = 0x80000, TFD_CLOEXEC = 0x80000, IN_CLOEXEC = 0x80000;
    private const int CLOCK_MONOTONIC = 1;

    [LibraryImport("libc", EntryPoint = "eventfd", SetLastError = true)]
    private static partial int EventFd(uint initial, int flags);

    [LibraryImport("libc", EntryPoint = "timerfd_create", SetLastError = true)]
    private static partial int TimerFdCreate(int clock, int flags);

    [LibraryImport("libc", EntryPoint = "inotify_init1", SetLastError = true)]
    private static partial int InotifyInit(int flags);

    private static SafeFileHandle Handle(int fd) =>
        fd >= 0 ? new SafeFileHandle(fd, ownsHandle: true) : throw new IOException($"errno {Marshal.GetLastPInvokeError()}");

    public static TheoryData<string> Kinds => new() { "eventfd", "timerfd", "inotify" };

    private static SafeFileHandle Create(string kind) => Handle(kind switch
    {
        "eventfd" => EventFd(0, EFD_CLOEXEC),
        "timerfd" => TimerFdCreate(CLOCK_MONOTONIC, TFD_CLOEXEC),
        _ => InotifyInit(IN_CLOEXEC),
    });

    [Theory]
    [MemberData(nameof(Kinds))]
    public void An_anon_inode_handle_is_one_whose_reads_may_wait_for_ever(string kind)
    {
        using SafeFileHandle handle = Create(kind);
        Assert.True(HandleFacts.Probe(handle).MayBlockIndefinitely, $"{kind} is classed as a handle whose operations always finish");
    }

    // With the Sync engine, a read that would block returns a pending task (as for a pipe), so that the
    // thread can go on and write the event it waits for.
    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task Reading_an_idle_eventfd_then_writing_it_on_one_thread_works(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using SafeFileHandle eventFd = Create("eventfd");
        byte[] counter = new byte[8];
        Task<int> flow = Task.Run(async () =>
        {
            ValueTask<int> read = SpindleRandomAccess.ReadAsync(eventFd, counter, 0, engine);
            await SpindleRandomAccess.WriteAsync(eventFd, BitConverter.GetBytes(5UL), 0, engine);
            return await read;
        });
        try
        {
            Assert.Equal(8, await flow.WaitAsync(TimeSpan.FromSeconds(30)));
        }
        catch (TimeoutException)
        {
            // Free the blocked thread before failing (an eventfd read is not interrupted by close).
            SpindleRandomAccess.Write(eventFd, BitConverter.GetBytes(1UL), 0);
            throw;
        }
        Assert.Equal(5UL, BitConverter.ToUInt64(counter));
    }
}
