namespace Spindle.Diagnostics;

/// <summary>
/// Records <see cref="SpindleMetrics.DurationName"/> for an asynchronous operation when it completes. When no
/// listener records durations (the start is 0) the task is returned as it is: no allocation and no clock read
/// on the hot path.
/// </summary>
internal static class AsyncTiming
{
    /// <summary>
    /// The start of an asynchronous operation on <paramref name="engine"/>, or 0 when not timed. The Sync engine's
    /// operations are timed where they run (<c>HandleIo</c>), so they are not timed twice.
    /// </summary>
    internal static long Start(IoEngine engine) => engine == IoEngine.Sync ? 0 : SpindleMetrics.StartTiming();

    internal static ValueTask<int> Time(ValueTask<int> task, long started, IoEngine engine, IoDirection direction)
        => started == 0 ? task : Await(task, started, engine, direction);

    internal static ValueTask<long> Time(ValueTask<long> task, long started, IoEngine engine, IoDirection direction)
        => started == 0 ? task : Await(task, started, engine, direction);

    internal static ValueTask Time(ValueTask task, long started, IoEngine engine, IoDirection direction)
        => started == 0 ? task : Await(task, started, engine, direction);

    private static async ValueTask<T> Await<T>(ValueTask<T> task, long started, IoEngine engine, IoDirection direction)
    {
        try
        {
            return await task.ConfigureAwait(false);
        }
        finally
        {
            SpindleMetrics.Duration(started, engine, direction);
        }
    }

    private static async ValueTask Await(ValueTask task, long started, IoEngine engine, IoDirection direction)
    {
        try
        {
            await task.ConfigureAwait(false);
        }
        finally
        {
            SpindleMetrics.Duration(started, engine, direction);
        }
    }
}
