using System.Security.Cryptography;
using System.Text;

namespace Spindle.Tests.Files;

/// <summary>
/// What a call of a content method did, as text two implementations can be compared on: its result (a hash of
/// bytes, text or lines, with their length), or where its exception came from (thrown by the call, or through
/// the task) with its type, HResult, and the parameter name of an argument exception.
/// </summary>
internal static class ContentOutcome
{
    internal static async Task<string> Of<T>(Func<Task<T>> call, Func<T, string> show)
    {
        Task<T> task;
        try
        {
            task = call();
        }
        catch (Exception e)
        {
            return "thrown " + Describe(e);
        }
        try
        {
            return "ok " + show(await task);
        }
        catch (Exception e)
        {
            return (task.IsCanceled ? "canceled " : "faulted ") + Describe(e);
        }
    }

    internal static Task<string> Of(Func<Task> call) => Of(async () => { await call(); return 0; }, _ => "done");

    internal static string Describe(Exception e)
        => e is ArgumentException argument ? $"{e.GetType().Name}({argument.ParamName})" : $"{e.GetType().Name} hr={e.HResult:X}";

    internal static string Show(byte[] bytes) => $"{bytes.Length}:{Convert.ToHexString(SHA256.HashData(bytes))[..16]}";

    internal static string Show(string text) => $"{text.Length}:{Convert.ToHexString(SHA256.HashData(Encoding.Unicode.GetBytes(text)))[..16]}";

    internal static string Show(IEnumerable<string> lines)
    {
        string[] all = lines.ToArray();
        return $"{all.Length} lines " + Show(string.Join("\u0001", all));
    }

    internal static async Task<string[]> ToArrayAsync(IAsyncEnumerable<string> lines)
    {
        var all = new List<string>();
        await foreach (string line in lines)
        {
            all.Add(line);
        }
        return all.ToArray();
    }

    /// <summary>The file's bytes, or what is there instead.</summary>
    internal static string OnDisk(string path)
        => File.Exists(path) ? Show(File.ReadAllBytes(path)) : Directory.Exists(path) ? "directory" : "missing";
}
