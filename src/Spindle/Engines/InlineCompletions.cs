namespace Spindle.Engines;

/// <summary>
/// The inline completion mode of the thread that starts operations: while it is on, the io_uring operations the thread
/// starts run their continuations on the thread that reaps their completion instead of a pool thread
/// (<see cref="SpindleRandomAccess.RunCompletionsInline"/>). Off unless asked for; read when an operation is prepared.
/// </summary>
internal static class InlineCompletions
{
    [ThreadStatic]
    private static int t_depth; // scopes open on this thread

    /// <summary>Whether operations this thread starts now complete inline.</summary>
    internal static bool Active => t_depth > 0;

    internal static void Enter() => t_depth++;

    internal static void Leave() => t_depth--;
}
