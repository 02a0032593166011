using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// One thread that waits with poll(2) until a pipe, socket or device can be read or written, so that an idle read
/// holds no thread and stays cancellable, as a queued System.IO operation does; the ready operation then runs on a
/// blocking thread. Per descriptor and direction one operation runs at a time, in arrival order: a pipe serialises
/// them anyway, and a byte for one reader wakes one thread. A waiting operation's handle is referenced (its descriptor
/// cannot be reused while polled); the lists are guarded by one lock; the poll thread never runs user code.
/// </summary>
internal sealed unsafe class ReadinessWaiter
{
    private static ReadinessWaiter? s_instance;
    private static object? s_createLock;
    private static readonly Action<object?> s_cancel = static state => Instance.Cancel((ThreadPoolOperation)state!);

    private readonly Lock _lock = new();
    private readonly List<Waiting> _waiting = new(16); // operations not yet released, in arrival order
    private readonly HashSet<long> _running = [];   // descriptor-and-direction keys whose released operation is still running
    private readonly int _wakeFd;                   // an eventfd: written to make the poll thread look again

    // Poll thread only.
    private PollFd* _polls;
    private int _pollCapacity;
    private readonly HashSet<long> _polled = []; // keys already in the poll set

    private struct Waiting
    {
        public ThreadPoolOperation? Operation;
        public HandleLease Handle; // the waiting descriptor, referenced until the operation is released
        public long Key;
        public CancellationTokenRegistration Registration;
    }

    // Made once, under s_createLock: its thread starts before it is published.
    private ReadinessWaiter()
    {
        _wakeFd = Libc.EventFd(0, OpenFlags.O_CLOEXEC); // EFD_CLOEXEC is O_CLOEXEC
        if (_wakeFd < 0)
        {
            throw IoErrors.ForErrno(Marshal.GetLastPInvokeError(), path: null);
        }
        new Thread(Run) { IsBackground = true, Name = "Spindle readiness" }.UnsafeStart();
    }

    /// <summary>The process's waiter, started on first use.</summary>
    /// <exception cref="IOException">No descriptor was left for its eventfd.</exception>
    internal static ReadinessWaiter Instance => LazyInitializer.EnsureInitialized(ref s_instance, ref s_createLock, static () => new ReadinessWaiter());

    /// <summary>Operations waiting for their descriptor (tests and diagnostics).</summary>
    internal int WaitingCount
    {
        get
        {
            lock (_lock)
            {
                return _waiting.Count;
            }
        }
    }

    /// <summary>
    /// Holds <paramref name="operation"/> until <paramref name="handle"/> is readable (or writable), then queues it on
    /// <see cref="WorkerThreads.Blocking"/>; a cancelled token releases it at once (its run reports the cancellation).
    /// </summary>
    internal void Wait(ThreadPoolOperation operation, SafeFileHandle handle, bool write, CancellationToken cancellationToken)
    {
        HandleLease lease = HandleLease.Acquire(handle); // the descriptor sits in the poll set until the operation is released
        long key = Key(HandleIo.Fd(handle), write);
        lock (_lock)
        {
            _waiting.Add(new Waiting { Operation = operation, Handle = lease, Key = key });
        }
        if (cancellationToken.CanBeCanceled)
        {
            CancellationTokenRegistration registration = cancellationToken.UnsafeRegister(s_cancel, operation);
            lock (_lock)
            {
                int index = IndexOf(operation);
                if (index >= 0)
                {
                    CollectionsMarshal.AsSpan(_waiting)[index].Registration = registration;
                    registration = default;
                }
            }
            // Released already (ready or cancelled): the registration is not needed any more.
            registration.Dispose();
        }
        Wake(_wakeFd);
    }

    /// <summary>Called by an operation this waiter released when its system call is done: the next one on that descriptor may go.</summary>
    internal void Done(long key)
    {
        lock (_lock)
        {
            _running.Remove(key);
        }
        Wake(_wakeFd);
    }

    private void Cancel(ThreadPoolOperation operation)
    {
        Waiting taken;
        lock (_lock)
        {
            int index = IndexOf(operation);
            if (index < 0)
            {
                return; // released already
            }
            taken = _waiting[index];
            _waiting.RemoveAt(index);
        }
        // Not marked running (ReadinessKey stays -1): the operation sees its cancelled token and makes no system call.
        taken.Handle.Release();
        System.Threading.ThreadPool.UnsafeQueueUserWorkItem(taken.Operation!, preferLocal: false);
    }

    private int IndexOf(ThreadPoolOperation operation)
    {
        for (int i = 0; i < _waiting.Count; i++)
        {
            if (ReferenceEquals(_waiting[i].Operation, operation))
            {
                return i;
            }
        }
        return -1;
    }

    // Adds one to an eventfd (this waiter's, or a FifoWriterWait's): whoever polls it wakes.
    internal static void Wake(int eventFd)
    {
        ulong one = 1;
        Libc.Write(eventFd, (byte*)&one, sizeof(ulong));
    }

    private void Run()
    {
        while (true)
        {
            int watched = Collect();
            if (Libc.Poll(_polls, (nuint)(watched + 1), -1) < 0)
            {
                continue; // EINTR; the set is rebuilt anyway
            }
            if (_polls[0].Revents != 0)
            {
                ulong drained;
                Libc.Read(_wakeFd, (byte*)&drained, sizeof(ulong));
            }
            for (int i = 1; i <= watched; i++)
            {
                if (_polls[i].Revents != 0)
                {
                    Release(Key(_polls[i].Fd, _polls[i].Events == Libc.POLLOUT));
                }
            }
        }
    }

    // The poll set: the wake-up eventfd, then each descriptor-and-direction with a waiting operation and none running.
    private int Collect()
    {
        _polled.Clear();
        lock (_lock)
        {
            if (_waiting.Count + 1 > _pollCapacity)
            {
                int capacity = Math.Max(_waiting.Count + 1, _pollCapacity * 2);
                _polls = (PollFd*)NativeMemory.Realloc(_polls, (nuint)capacity * (nuint)sizeof(PollFd));
                _pollCapacity = capacity;
            }
            _polls[0] = new PollFd { Fd = _wakeFd, Events = Libc.POLLIN };
            int watched = 0;
            for (int i = 0; i < _waiting.Count; i++)
            {
                long key = _waiting[i].Key;
                if (_running.Contains(key) || !_polled.Add(key))
                {
                    continue;
                }
                watched++;
                _polls[watched] = new PollFd { Fd = (int)(key >> 1), Events = (key & 1) != 0 ? Libc.POLLOUT : Libc.POLLIN };
            }
            return watched;
        }
    }

    // The first operation waiting on a ready descriptor-and-direction goes to a blocking thread.
    private void Release(long key)
    {
        Waiting taken = default;
        lock (_lock)
        {
            for (int i = 0; i < _waiting.Count; i++)
            {
                if (_waiting[i].Key == key)
                {
                    taken = _waiting[i];
                    _waiting.RemoveAt(i);
                    _running.Add(key);
                    break;
                }
            }
        }
        if (taken.Operation is null)
        {
            return;
        }
        // After this, no cancellation callback runs for this wait (one running now is waited for; it finds nothing).
        taken.Registration.Dispose();
        taken.Handle.Release();
        taken.Operation.ReadinessKey = key; // its run calls Done(key); published by the queue
        WorkerThreads.Blocking.Queue(taken.Operation);
    }

    private static long Key(int fd, bool write) => ((long)fd << 1) | (write ? 1L : 0L);
}
