namespace Spindle.Tests.Reliability.Fuzzing;

/// <summary>
/// Bugs the fuzzer found that are reported but not fixed yet. While a flag is true the fuzzer does not
/// generate the input that shows the bug (so that it keeps looking for new ones); the regression test named
/// beside the flag fails until the fix lands, and then the flag goes.
/// </summary>
public static class KnownBugs
{
    /// <summary>Regression: FoundBugTests.CopyToAsync_on_a_write_only_stream_throws_at_once_and_flushes_nothing.</summary>
    public const bool CopyToAsyncOnUnreadableStream = false;
}
