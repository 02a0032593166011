namespace Spindle.Engines;

/// <summary>
/// While on, the io_uring operations this thread starts run their continuations on the thread that reaps their
/// completion, not a pool thread (<see cref="SpindleRandomAccess.RunCompletionsInline"/>); read when one is prepared.
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
