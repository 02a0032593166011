using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// What <c>open(2)</c> of a FIFO for reading waits for, a writer, for a read end opened with O_NONBLOCK (so that no
/// ring worker is held by a FIFO). That open pairs with a writer already waiting in its own open, which may write at
/// once, so the read end is kept (reopening would drop those bytes): it is ready when a writer holds the FIFO or came
/// since it opened. poll(2) does not signal a writer that has not written yet, so the wait, on a thread of Spindle's
/// own, also looks for one every few milliseconds; the token wakes it at once through an eventfd.
/// </summary>
/// <remarks>Rare enough to allocate (a task, a pipe, an eventfd and a registration per wait).</remarks>
internal sealed unsafe class FifoWriterWait : IThreadPoolWorkItem
{
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationToken _cancellationToken;
    private readonly Sink _sink;
    private readonly int _wake; // an eventfd of this wait's own: written to cancel it
    private HandleLease _readEnd;
    private CancellationTokenRegistration _registration;

    private FifoWriterWait(SafeFileHandle readEnd, Sink sink, int wake, CancellationToken cancellationToken)
    {
        _readEnd = HandleLease.Acquire(readEnd);
        _sink = sink;
        _wake = wake;
        _cancellationToken = cancellationToken;
    }

    /// <summary>
    /// Completes when the FIFO <paramref name="readEnd"/> (opened with O_NONBLOCK, owned by the caller until this
    /// completes) has a writer or had one since it opened; at once when it has. Cancelled by the token at once.
    /// </summary>
    internal static Task UntilWriterCameAsync(SafeFileHandle readEnd, CancellationToken cancellationToken)
    {
        var sink = Sink.Create();
        int wake = -1;
        FifoWriterWait wait;
        try
        {
            if (WriterCame((int)readEnd.DangerousGetHandle(), sink)) // the caller keeps the handle open through this call
            {
                sink.Close();
                return Task.CompletedTask;
            }
            cancellationToken.ThrowIfCancellationRequested();
            wake = Libc.EventFd(0, OpenFlags.O_CLOEXEC | OpenFlags.O_NONBLOCK);
            if (wake < 0)
            {
                throw IoErrors.ForErrno(Errno.Last, path: null);
            }
            wait = new FifoWriterWait(readEnd, sink, wake, cancellationToken); // a handle disposed meanwhile throws here
        }
        catch
        {
            sink.Close();
            if (wake >= 0)
            {
                Libc.Close(wake);
            }
            throw;
        }
        wait._registration = cancellationToken.UnsafeRegister(static state => ReadinessWaiter.Wake(((FifoWriterWait)state!)._wake), wait);
        WorkerThreads.Blocking.Queue(wait);
        return wait._completion.Task;
    }

    /// <summary>
    /// Whether a writer holds the FIFO now or came since the read end <paramref name="fd"/> opened. <c>tee</c> without
    /// waiting tells it without taking a byte: bytes copied (the pipe holds some), EAGAIN (empty, with a writer), or
    /// 0 (empty, no writer); POLLHUP then tells a writer that came and left since the open from none at all.
    /// </summary>
    private static bool WriterCame(int fd, Sink sink)
    {
        nint teed;
        do
        {
            teed = Libc.Tee(fd, sink.WriteEnd, 1, Libc.SPLICE_F_NONBLOCK);
        }
        while (teed < 0 && Errno.Last == Errno.EINTR);
        if (teed > 0)
        {
            sink.Empty();
            return true;
        }
        if (teed < 0)
        {
            int errno = Errno.Last;
            return errno == Errno.EAGAIN ? true : throw IoErrors.ForErrno(errno, path: null);
        }
        PollFd poll = new() { Fd = fd, Events = Libc.POLLIN };
        return Libc.Poll(&poll, 1, 0) > 0;
    }

    void IThreadPoolWorkItem.Execute()
    {
        int fd = (int)_readEnd.Handle!.DangerousGetHandle(); // referenced by the lease until this wait ends
        PollFd* entries = stackalloc PollFd[2];
        entries[0] = new PollFd { Fd = fd, Events = Libc.POLLIN };
        entries[1] = new PollFd { Fd = _wake, Events = Libc.POLLIN };
        Exception? failure = null;
        while (true)
        {
            int result = Libc.Poll(entries, 2, EngineTunables.FifoWriterLookMilliseconds);
            if (result < 0 && Errno.Last != Errno.EINTR)
            {
                failure = IoErrors.ForErrno(Errno.Last, path: null);
                break;
            }
            try
            {
                if (result > 0 || WriterCame(fd, _sink))
                {
                    break;
                }
            }
            catch (Exception e)
            {
                failure = e;
                break;
            }
        }
        _registration.Dispose(); // waits for a wake-up running now: the eventfd is closed only after it
        Libc.Close(_wake);
        _sink.Close();
        _readEnd.Release();
        if (entries[1].Revents != 0 || _cancellationToken.IsCancellationRequested)
        {
            _completion.TrySetCanceled(_cancellationToken);
        }
        else if (failure is not null)
        {
            _completion.TrySetException(failure);
        }
        else
        {
            _completion.TrySetResult();
        }
    }

    /// <summary>A pipe of the wait's own that <c>tee</c> copies a byte into, to learn whether the FIFO holds any.</summary>
    private readonly struct Sink(int readEnd, int writeEnd)
    {
        internal int WriteEnd => writeEnd;

        internal static Sink Create()
        {
            int* fds = stackalloc int[2];
            return Libc.Pipe2(fds, OpenFlags.O_CLOEXEC | OpenFlags.O_NONBLOCK) == 0
                ? new Sink(fds[0], fds[1])
                : throw IoErrors.ForErrno(Errno.Last, path: null);
        }

        /// <summary>Takes back the byte copied in.</summary>
        internal void Empty()
        {
            byte discarded;
            _ = Libc.Read(readEnd, &discarded, 1);
        }

        internal void Close()
        {
            Libc.Close(readEnd);
            Libc.Close(writeEnd);
        }
    }
}
