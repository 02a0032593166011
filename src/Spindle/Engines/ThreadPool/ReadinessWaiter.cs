using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// One thread that waits with poll(2) until a pipe, socket or device can be read or written, so that an idle read
/// holds no thread and stays cancellable while it waits, as a queued System.IO operation does. A ready operation runs
/// on a blocking thread, where its system call returns at once. Per descriptor and direction one operation runs at a
/// time, in the order they came: a pipe serialises them anyway, and a byte for one reader wakes one thread.
/// <para>
/// Who owns what: a waiting operation's handle is referenced by the waiter (its descriptor cannot be reused while
/// polled); the lists are guarded by one lock; the poll thread never runs user code.
/// </para>
/// </summary>
internal sealed unsafe class ReadinessWaiter
{
    private static ReadinessWaiter? s_instance;
    private static readonly Lock s_createLock = new();
    private static readonly Action<object?> s_cancel = static state => Instance.Cancel((ThreadPoolOperation)state!);

    private readonly Lock _lock = new();
    private readonly List<Waiting> _waiting = new(16); // operations not yet released, in arrival order
    private readonly HashSet<long> _running = [];   // descriptor-and-direction keys whose released operation is still running
    private readonly int _wakeFd;                   // an eventfd: written to make the poll thread look again

    // Poll thread only.
    private PollFd* _polls;
    private int _pollCapacity;
    private long[] _pollKeys = new long[16];
    private readonly Dictionary<long, int> _pollIndex = [];

    private struct Waiting
    {
        public ThreadPoolOperation? Operation;
        public HandleLease Handle; // the waiting descriptor, referenced until the operation is released
        public long Key;
        public CancellationTokenRegistration Registration;
    }

    private ReadinessWaiter(int wakeFd) => _wakeFd = wakeFd;

    /// <summary>The process's waiter, started on first use.</summary>
    /// <exception cref="IOException">No descriptor was left for its eventfd.</exception>
    internal static ReadinessWaiter Instance => Volatile.Read(ref s_instance) ?? Create();

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

    private static ReadinessWaiter Create()
    {
        lock (s_createLock)
        {
            if (s_instance is not null)
            {
                return s_instance;
            }
            int fd = Libc.EventFd(0, OpenFlags.O_CLOEXEC); // EFD_CLOEXEC is O_CLOEXEC
            if (fd < 0)
            {
                throw IoErrors.ForErrno(Marshal.GetLastPInvokeError(), path: null);
            }
            var waiter = new ReadinessWaiter(fd);
            var thread = new Thread(waiter.Run) { IsBackground = true, Name = "Spindle readiness" };
            thread.UnsafeStart();
            Volatile.Write(ref s_instance, waiter);
            return waiter;
        }
    }

    /// <summary>
    /// Holds <paramref name="operation"/> until <paramref name="handle"/> is readable (or writable), then
    /// queues it on <see cref="WorkerThreads.Blocking"/>. A cancelled token releases it at once, and its run
    /// reports the cancellation.
    /// </summary>
    internal void Wait(ThreadPoolOperation operation, SafeFileHandle handle, bool write, CancellationToken cancellationToken)
    {
        HandleLease lease = HandleLease.Acquire(handle); // the descriptor sits in the poll set until the operation is released
        long key = ((long)HandleIo.Fd(handle) << 1) | (write ? 1L : 0L);
        operation.ReadinessKey = key;
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
        Wake();
    }

    /// <summary>Called by an operation this waiter released when its system call is done: the next one on that descriptor may go.</summary>
    internal void Done(long key)
    {
        lock (_lock)
        {
            _running.Remove(key);
        }
        Wake();
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
        // Not marked running: the operation sees its cancelled token and makes no system call.
        taken.Operation!.ReadinessKey = -1;
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

    private void Wake()
    {
        ulong one = 1;
        Libc.Write(_wakeFd, (byte*)&one, sizeof(ulong));
    }

    private void Run()
    {
        while (true)
        {
            int watched = Collect();
            int result = Libc.Poll(_polls, (nuint)(watched + 1), -1);
            if (result < 0)
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
                    Release(_pollKeys[i]);
                }
            }
        }
    }

    // The poll set: the wake-up eventfd, then each descriptor-and-direction with a waiting operation and none running.
    private int Collect()
    {
        _pollIndex.Clear();
        lock (_lock)
        {
            EnsurePollCapacity(_waiting.Count + 1);
            _polls[0] = new PollFd { Fd = _wakeFd, Events = Libc.POLLIN };
            int watched = 0;
            for (int i = 0; i < _waiting.Count; i++)
            {
                long key = _waiting[i].Key;
                if (_running.Contains(key) || !_pollIndex.TryAdd(key, watched + 1))
                {
                    continue;
                }
                watched++;
                _polls[watched] = new PollFd { Fd = (int)(key >> 1), Events = (key & 1) != 0 ? Libc.POLLOUT : Libc.POLLIN };
                _pollKeys[watched] = key;
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
        WorkerThreads.Blocking.Queue(taken.Operation);
    }

    private void EnsurePollCapacity(int count)
    {
        if (count > _pollCapacity)
        {
            int capacity = Math.Max(count, _pollCapacity * 2);
            _polls = (PollFd*)NativeMemory.Realloc(_polls, (nuint)capacity * (nuint)sizeof(PollFd));
            _pollCapacity = capacity;
            Array.Resize(ref _pollKeys, capacity);
        }
    }
}
