using System.Diagnostics;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// The one thread that runs the ring (<see cref="RingDriver"/>) and its policy: it places what callers
/// queued, submits it with one <c>io_uring_enter</c> that also waits for completions, and hands completed
/// operations to <see cref="Continuations"/>, so their continuations run on the thread pool, never here.
/// So no user code and no metrics listener can delay the ring, and the kernel's task work for what this
/// thread submitted always runs (it never sleeps in user code). Callers never make a system call unless
/// the thread sleeps, and then one eventfd write wakes it (a standing read on the eventfd completes). The
/// thread is a background thread: process exit does not wait for it.
/// </summary>
internal sealed unsafe class RingThread
{
    private const uint Entries = 256;                   // SQ ring size (the CQ ring: Ring.CompletionEntries, or twice this on old kernels)
    private const ulong WakeTag = ulong.MaxValue;       // user data of the standing eventfd read
    private const int NiceSteps = 10;                   // how much nearer the front the thread asks to be
    private const ulong SliceNanoseconds = 100_000;     // the shortest time slice the kernel grants
    private const int WatchMicroseconds = 20;           // how long the thread watches for a next request before it sleeps
    private const int WatchesSkipped = 16;              // sleeps without watching after a watch that saw nothing
    private const uint BoundWorkers = 64;               // io-wq workers that may wait at once (opens, syncs); the kernel's default is 4 per CPU

    // Watching only helps where a continuation can run on another core meanwhile.
    private static readonly int s_processors = Environment.ProcessorCount;
    private static readonly bool s_watchBeforeSleep = s_processors > 1;
    private static readonly long s_watchTicks = Stopwatch.Frequency * WatchMicroseconds / 1_000_000;

    private RingDriver _driver = null!;
    private int _wakeFd = -1;            // eventfd that callers write to wake the thread
    private ulong* _wakeBuffer;          // where the standing eventfd read puts the counter
    private bool _wakeArmed;             // whether the eventfd read is on the ring
    private int _sleeping;               // 1 while the thread is (about to be) blocked in io_uring_enter
    private int _delivered;              // completions handed to the continuations since the thread last watched
    private int _watchesToSkip;          // sleeps left before the thread watches again

    /// <summary>Where completed operations' continuations run (the thread pool; rescue threads when it is starved).</summary>
    internal ContinuationDispatcher Continuations { get; } = new("Spindle io_uring completions");

    /// <summary>The thread's id (the kernel's), once it started.</summary>
    internal int ThreadId { get; private set; }

    /// <summary>The nice value the thread runs at, once it started (null when it could not be read).</summary>
    internal int? Nice { get; private set; }

    /// <summary>How many io-wq workers may wait at once for requests that can block (0 when the kernel would not say).</summary>
    internal uint BoundWorkerLimit { get; private set; }

    /// <summary>Whether the kernel took the thread's request for a short time slice.</summary>
    internal bool ShortSlice { get; private set; }

    /// <summary>The ring's driver (its state, for diagnostics and tests).</summary>
    internal RingDriver Driver => _driver;

    /// <summary>The setup flags the kernel accepted (for diagnostics).</summary>
    internal uint SetupFlags => _driver.SetupFlags;

    /// <summary>The most SQEs ever in flight at once; never more than the CQ ring holds.</summary>
    internal int MaxInFlight => _driver.MaxInFlight;

    /// <summary>How many <c>io_uring_enter</c> calls submitted SQEs.</summary>
    internal long SubmittingEnters => _driver.SubmittingEnters;

    /// <summary>Whether the thread has decided to sleep (or sleeps) in <c>io_uring_enter</c> until a completion or a wake-up (tests).</summary>
    internal bool IsSleeping => Volatile.Read(ref _sleeping) != 0;

    /// <summary>How many completions wait in the CQ ring, not reaped yet (test seam).</summary>
    internal uint ReadyCompletions => _driver.ReadyCompletions;

    /// <summary>How many completions the CQ ring holds.</summary>
    internal uint CqEntries => _driver.CqEntries;

    /// <summary>How many operations that may wait for ever can be in the kernel at once.</summary>
    internal int BlockingBudget => _driver.BlockingBudget;

    /// <summary>
    /// Test seam (tests on a private engine only): while set, the thread leaves callers' operations in
    /// the pending queue, as when the ring has no room, so that a test can act on a queued operation.
    /// </summary>
    internal bool HoldPending
    {
        get => _driver.HoldPending;
        set => _driver.HoldPending = value;
    }

    /// <summary>Starts the thread and waits until it has set up the ring, or failed to (<paramref name="errno"/> says why).</summary>
    /// <exception cref="OutOfMemoryException">The thread could not be created.</exception>
    internal bool Start(IoUringEngine engine, out int errno)
    {
        int error = 0;
        bool ready = false;
        using var started = new ManualResetEventSlim();
        var thread = new Thread(() =>
        {
            // The eventfd first: when the ring then fails, closing it is all there is to undo.
            int wakeFd = Libc.EventFd(0, EFD_CLOEXEC);
            Ring? ring = null;
            if (wakeFd < 0)
            {
                error = Errno.Last;
            }
            else if ((ring = Ring.TryCreate(Entries, shared: false, out error)) is null)
            {
                Libc.Close(wakeFd);
            }
            ready = ring is not null;
            if (ready)
            {
                BoundWorkerLimit = ring!.RaiseBoundWorkers(BoundWorkers);
                _driver = new RingDriver(engine, ring!);
                _wakeFd = wakeFd;
                _wakeBuffer = (ulong*)System.Runtime.InteropServices.NativeMemory.AlignedAlloc(8, 8);
                RunFirst();
            }
            started.Set();
            if (ready)
            {
                Run();
            }
        })
        {
            IsBackground = true,
            Name = "Spindle io_uring",
        };
        thread.UnsafeStart();
        started.Wait();
        errno = error;
        return ready;
    }

    /// <summary>
    /// Asks the scheduler to run this thread first when it wakes. It only submits and reaps, a few
    /// microseconds per wake-up, but every operation on the ring waits for it twice (submission and
    /// completion); while continuations keep every core busy, a thread of normal priority that wakes waits
    /// for a running thread's time slice to end. So: a nice value <see cref="NiceSteps"/> lower where the
    /// process may lower it (CAP_SYS_NICE, RLIMIT_NICE), and the shortest time slice where the kernel has
    /// per-thread slices (EEVDF, Linux 6.12+), which anyone may ask for. Neither is needed for correctness.
    /// </summary>
    private void RunFirst()
    {
        ThreadId = Libc.GetTid();
        int? nice = Libc.ThreadNice(ThreadId);
        if (nice is int current && SpindleSwitches.RaiseRingThreadPriority)
        {
            int wanted = Math.Max(-20, current - NiceSteps);
            if (Libc.SetThreadNice(ThreadId, wanted))
            {
                current = wanted;
            }
            ShortSlice = Libc.SetOwnTimeSlice(current, SliceNanoseconds);
            nice = Libc.ThreadNice(ThreadId);
        }
        Nice = nice;
    }

    /// <summary>Starts a prepared operation (any thread): queues it and wakes the ring thread if it sleeps.</summary>
    internal void Submit(IoUringOperation operation)
    {
        _driver.Queue(operation);
        if (!CanWaitForNextCompletion(operation))
        {
            WakeIfSleeping();
        }
    }

    // While other continuations occupy every core, a file request need not wake the thread when others of its class
    // are in the kernel: the thread wakes for the next of their completions anyway and places it then, so each read
    // costs the continuations one preemption instead of two. (The submitter's own continuation does not count: it
    // usually ends right after, and without others to preempt an early submission keeps the device busy.) Pairs
    // with the fence in Run: either the thread sees the request before it sleeps, or this sees the count it left.
    private bool CanWaitForNextCompletion(IoUringOperation operation)
    {
        if (operation.MayBlock || Continuations.RunningBesidesCaller < s_processors)
        {
            return false;
        }
        Interlocked.MemoryBarrier();
        return _driver.RegularInFlight > 0;
    }

    /// <summary>Queues a prepared operation without waking the thread: a batch queues all of its operations, then calls <see cref="Wake"/> once.</summary>
    internal void Queue(IoUringOperation operation) => _driver.Queue(operation);

    /// <summary>Wakes the thread if it sleeps, after <see cref="Queue"/>: what was queued while it slept goes in with one <c>io_uring_enter</c>.</summary>
    internal void Wake() => WakeIfSleeping();

    /// <summary>Queues a cancellation (any thread, from the token's callback).</summary>
    internal void RequestCancel(IoUringOperation operation, uint generation)
    {
        _driver.EnqueueCancel(operation, generation);
        WakeIfSleeping();
    }

    private void WakeIfSleeping()
    {
        // Pairs with the fence in Run: either the thread sees our item, or we see it sleeping.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _sleeping) != 0 && Interlocked.Exchange(ref _sleeping, 0) != 0)
        {
            ulong one = 1;
            Libc.Write(_wakeFd, (byte*)&one, sizeof(ulong));
        }
    }

    /// <summary>Completes an operation (ring thread): its continuation runs on the thread pool.</summary>
    internal void Deliver(IoUringOperation operation)
    {
        _delivered++;
        Continuations.Post(operation);
    }

    /// <summary>Watches for a request or a completion for up to <see cref="WatchMicroseconds"/>; true when one came.</summary>
    private bool WatchBriefly()
    {
        long until = Stopwatch.GetTimestamp() + s_watchTicks;
        do
        {
            if (Continuations.Running >= s_processors)
            {
                return false; // continuations fill every core: watching would take one of theirs
            }
            System.Threading.Thread.SpinWait(20);
            if (_driver.HasWorkNow || _driver.CanPlaceMore())
            {
                return true;
            }
        }
        while (Stopwatch.GetTimestamp() < until);
        return false;
    }

    /// <summary>The ring thread's loop: reap, place what waits, then submit and wait in one enter.</summary>
    private void Run()
    {
        while (true)
        {
            try
            {
                if (_driver.Reap(WakeTag))
                {
                    _wakeArmed = false;
                }
                if (!_wakeArmed)
                {
                    _wakeArmed = _driver.TryPlaceRead(_wakeFd, _wakeBuffer, sizeof(ulong), WakeTag);
                }
                _driver.Fill();
                bool wait = false;
                if (!_driver.HasWorkNow && _delivered != 0 && s_watchBeforeSleep)
                {
                    // Continuations just handed to the pool usually submit their next request within
                    // microseconds: watching for it a little is cheaper than the caller's eventfd write and
                    // this thread's wake-up, and the request goes to the kernel sooner. Only while a core
                    // is free: when continuations do work first, watching takes their CPU; and after a
                    // watch that saw nothing the thread sleeps at once for the next WatchesSkipped times.
                    _delivered = 0;
                    if (_watchesToSkip > 0)
                    {
                        _watchesToSkip--;
                    }
                    else if (WatchBriefly())
                    {
                        continue;
                    }
                    else
                    {
                        _watchesToSkip = WatchesSkipped;
                    }
                }
                if (!_driver.HasWorkNow)
                {
                    Volatile.Write(ref _sleeping, 1);
                    Interlocked.MemoryBarrier();
                    if (!_driver.CanPlaceMore())
                    {
                        // Nothing left that could go on the ring now: block until a completion
                        // (which frees room) or a caller's eventfd write.
                        wait = true;
                    }
                    else
                    {
                        Volatile.Write(ref _sleeping, 0);
                        if (_driver.Unsubmitted == 0)
                        {
                            continue;
                        }
                    }
                }
                _driver.Enter(wait);
                Volatile.Write(ref _sleeping, 0);
            }
            catch (Exception e)
            {
                // Nothing may kill this thread: operations in flight depend on it.
                Console.Error.WriteLine($"Spindle io_uring thread: {e}");
                System.Threading.Thread.Sleep(1);
            }
        }
    }
}
