namespace Spindle.Clients.Devices.Tests;

/// <summary>
/// A device's Dispose racing a completion callback that is still running: the callback blocks on an event until
/// Dispose has either returned (the defect) or started waiting (the contract), so the outcome does not depend on timing.
/// Shared by the FASTER and Garnet device tests (linked into both projects).
/// </summary>
internal static class CallbackDisposeRace
{
    /// <summary>What the race observed.</summary>
    /// <param name="PendingInsideCallback">The device's count of operations in flight, read inside the callback.</param>
    /// <param name="CallbackRunningWhenDisposeReturned">Whether the callback was still running when Dispose returned.</param>
    internal readonly record struct Outcome(int PendingInsideCallback, bool CallbackRunningWhenDisposeReturned);

    /// <param name="startRead">Starts one read whose callback is the action given; run on a thread of its own, since on the Sync engine the callback runs inside the read call.</param>
    /// <param name="pendingOperations">The device's count of operations in flight.</param>
    /// <param name="dispose">Disposes the device.</param>
    internal static Outcome Run(Action<Action> startRead, Func<int> pendingOperations, Action dispose)
    {
        using var entered = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        int pendingInsideCallback = -1;
        int callbackRunning = 0;
        var issuer = new Thread(() => startRead(() =>
        {
            pendingInsideCallback = pendingOperations();
            Volatile.Write(ref callbackRunning, 1);
            entered.Set();
            release.Wait();
            Volatile.Write(ref callbackRunning, 0);
        }));
        issuer.Start();
        entered.Wait();

        int runningWhenDisposeReturned = -1;
        var disposer = new Thread(() =>
        {
            dispose();
            runningWhenDisposeReturned = Volatile.Read(ref callbackRunning);
        });
        disposer.Start();
        // Released once Dispose has returned or waits: either way its answer is then fixed.
        SpinWait.SpinUntil(() => !disposer.IsAlive || (disposer.ThreadState & ThreadState.WaitSleepJoin) != 0);
        release.Set();
        disposer.Join();
        issuer.Join();
        return new(pendingInsideCallback, runningWhenDisposeReturned == 1);
    }
}
