using System.Runtime.Versioning;
using Xunit.Abstractions;

namespace Spindle.Tests.Reliability.BadInput;

/// <summary>
/// Every public member of Spindle, tried with bad inputs: each gives the documented exception (the same
/// type as System.IO where System.IO has the member) and leaves the file's bytes unchanged.
/// </summary>
[SupportedOSPlatform("linux")]
public class BadInputTests(ITestOutputHelper output)
{
    [Fact]
    public void Every_public_member_has_a_row_in_the_bad_input_table()
    {
        string[] members = PublicSurface.Members().Select(m => m.Key).ToArray();
        string[] missing = members.Where(m => !BadInputTable.Rows.ContainsKey(m)).ToArray();
        string[] stale = BadInputTable.Rows.Keys.Where(k => !members.Contains(k)).ToArray();
        Assert.True(missing.Length == 0, "public members without a row in BadInputTable (add one):\n" + string.Join("\n", missing));
        Assert.True(stale.Length == 0, "rows in BadInputTable for members that no longer exist:\n" + string.Join("\n", stale));
    }

    [Fact]
    public Task Every_bad_input_gives_the_documented_exception_and_leaves_the_file_unchanged() => ReliabilityKit.Bounded(() =>
    {
        using var context = new BadInputContext();
        var failures = new List<string>();
        int inputs = 0;
        foreach ((string member, BadInputTable.Row row) in BadInputTable.Rows.OrderBy(r => r.Key, StringComparer.Ordinal))
        {
            foreach (BadInputCase @case in row(context))
            {
                inputs++;
                Exception? spindle = BadInputCase.Outcome(@case.Spindle);
                Exception? system = @case.SystemIo is null ? null : BadInputCase.Outcome(@case.SystemIo);
                Type? expected = @case.Expected ?? system?.GetType();
                bool sameAsSystemIo = @case.SystemIo is null || BadInputCase.Describe(spindle) == BadInputCase.Describe(system);
                bool wrong = spindle?.GetType() != expected || (@case.SystemIo is not null && system?.GetType() != expected) || !sameAsSystemIo;
                if (@case.KnownBug is not null)
                {
                    output.WriteLine($"known bug, not failed: {member} with {@case.Input}: {@case.KnownBug}");
                    if (!wrong)
                    {
                        failures.Add($"{member} with {@case.Input}: the known bug '{@case.KnownBug}' is fixed; remove its KnownBug tag");
                    }
                }
                else if (wrong)
                {
                    failures.Add($"{member} with {@case.Input}: expected {expected?.Name ?? "no exception"}, Spindle gave {BadInputCase.Describe(spindle)}" +
                        (@case.SystemIo is null ? "" : $", System.IO gave {BadInputCase.Describe(system)}"));
                }
                try
                {
                    context.AssertUnchanged(@case.Input);
                }
                catch (Exception e)
                {
                    failures.Add($"{member} with {@case.Input}: {e.Message}");
                    File.WriteAllBytes(context.SpindlePath, BadInputContext.Content);
                    File.WriteAllBytes(context.SystemPath, BadInputContext.Content);
                }
            }
        }
        output.WriteLine($"bad inputs: {inputs} inputs tried on {BadInputTable.Rows.Count} public members, {failures.Count} failures");
        Assert.True(failures.Count == 0, string.Join("\n", failures));
        return Task.CompletedTask;
    });
}
