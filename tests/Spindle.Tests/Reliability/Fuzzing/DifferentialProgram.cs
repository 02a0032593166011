using System.Text;

namespace Spindle.Tests.Reliability.Fuzzing;

/// <summary>
/// What every differential program shares: the seed and its choices, the sides (System.IO first), the
/// log that a failure prints, running one step on every side and comparing outcomes and bytes on disk.
/// </summary>
public abstract class DifferentialProgram
{
    protected readonly FuzzChoices _choices;
    protected readonly FuzzSide[] _sides;
    protected readonly FuzzTotals _totals;
    protected readonly long _seed;
    protected readonly string _testName;
    protected readonly List<string> _log = [];
    protected long _length; // the reference file's length on disk after the last step

    protected DifferentialProgram(long seed, FuzzSide[] sides, FuzzTotals totals, string testName)
    {
        _seed = seed;
        _choices = new FuzzChoices(unchecked((int)(seed * 2654435761L >> 7)));
        _sides = sides;
        _totals = totals;
        _testName = testName;
    }

    /// <summary>Gives every side the same starting file (or none).</summary>
    protected void ResetFiles()
    {
        FuzzChoices c = _choices;
        bool exists = c.Chance(80);
        byte[] initial = exists ? c.Bytes(c.Chance(20) ? c.Pick(0, 512, 4096) : c.Random.Next(0, 20_000)) : [];
        foreach (FuzzSide side in _sides)
        {
            if (exists)
            {
                File.WriteAllBytes(side.Path, initial);
            }
            else
            {
                File.Delete(side.Path);
            }
        }
        _log.Add(exists ? $"file of {initial.Length} bytes" : "no file");
    }

    protected async Task Step(string description, Func<FuzzSide, ValueTask<string>> operation)
    {
        _log.Add(description);
        string expected = await Outcome(() => operation(_sides[0]));
        if (expected.StartsWith("throws", StringComparison.Ordinal) || expected.StartsWith("fails", StringComparison.Ordinal))
        {
            _totals.AddException();
        }
        for (int i = 1; i < _sides.Length; i++)
        {
            string actual = await Outcome(() => operation(_sides[i]));
            if (actual != expected)
            {
                Fail(_sides[i], $"result: System.IO gave '{expected}', Spindle gave '{actual}'");
            }
        }
        CompareDisks();
        _totals.AddOperation(_sides.Length);
    }

    protected void CompareDisks()
    {
        ReadOnlySpan<byte> expected = _sides[0].Disk(out bool expectedExists);
        _length = expected.Length;
        for (int i = 1; i < _sides.Length; i++)
        {
            ReadOnlySpan<byte> actual = _sides[i].Disk(out bool exists);
            if (exists != expectedExists || !actual.SequenceEqual(expected))
            {
                int at = expected.CommonPrefixLength(actual);
                Fail(_sides[i], $"bytes on disk: System.IO has {(expectedExists ? expected.Length + " bytes" : "no file")}, Spindle has {(exists ? actual.Length + " bytes" : "no file")}, first difference at {at}");
            }
        }
    }

    protected void Fail(FuzzSide side, string what)
    {
        var message = new StringBuilder()
            .AppendLine($"Spindle ({side.Name} engine) differs from System.IO in program seed {_seed}, step {_log.Count - 1}: {what}")
            .AppendLine("program:");
        for (int i = 0; i < _log.Count; i++)
        {
            message.AppendLine($"  {i}. {_log[i]}");
        }
        message.AppendLine("replay: " + FuzzSettings.ReplayCommand(_seed, _testName));
        throw new FuzzDifference(message.ToString());
    }

    private static async Task<string> Outcome(Func<ValueTask<string>> start)
    {
        ValueTask<string> pending;
        try
        {
            pending = start();
        }
        catch (Exception e)
        {
            return "throws " + Describe(e);
        }
        try
        {
            return await pending;
        }
        catch (Exception e)
        {
            return "fails " + Describe(e);
        }
    }

    private static string Describe(Exception e) => e switch
    {
        AggregateException a => string.Join(" + ", a.InnerExceptions.Select(Describe)),
        ArgumentException a => $"{a.GetType().Name}({a.ParamName})",
        IOException io when io.GetType() == typeof(IOException) => $"IOException(errno {io.HResult})",
        _ => e.GetType().Name,
    };

    protected static ValueTask<string> Done(string result) => new(result);

    protected static async ValueTask<string> Then<T>(ValueTask<T> pending, Func<T, string> result) => result(await pending);

    protected static async ValueTask<string> Then(ValueTask pending, string result)
    {
        await pending;
        return result;
    }

    protected static byte[] Filled(int size)
    {
        var buffer = new byte[size];
        buffer.AsSpan().Fill(0xCC);
        return buffer;
    }

    protected static string Hash(ReadOnlySpan<byte> bytes)
    {
        var hash = new HashCode();
        hash.AddBytes(bytes);
        return $"{bytes.Length}:{hash.ToHashCode():x8}";
    }
}
