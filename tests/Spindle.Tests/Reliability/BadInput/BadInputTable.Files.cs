using System.Reflection;
using System.Runtime.ExceptionServices;
using System.Text;
using static Spindle.Tests.Reliability.BadInput.BadInputCase;

namespace Spindle.Tests.Reliability.BadInput;

/// <summary>The rows of File's content twins: a null and an empty path, and a null encoding, as System.IO's twin.</summary>
public static partial class BadInputTable
{
    private static readonly string[] s_contentMethods =
        ["ReadAllBytes", "ReadAllText", "ReadAllLines", "ReadLines", "WriteAllBytes", "WriteAllText", "WriteAllLines", "AppendAllBytes", "AppendAllText", "AppendAllLines"];

    private static void AddFilesRows()
    {
        foreach (MethodInfo method in typeof(SpindleFile).GetMethods(BindingFlags.Public | BindingFlags.Static)
            .Where(m => s_contentMethods.Contains(m.Name.Replace("Async", ""))))
        {
            Type[] parameters = method.GetParameters().Select(p => p.ParameterType).ToArray();
            MethodInfo twin = typeof(File).GetMethod(method.Name, parameters)!;
            string key = PublicSurface.Key(typeof(SpindleFile), method);
            if (parameters.Any(p => p.IsByRefLike))
            {
                Rows[key] = SpanRow(method.Name, parameters);
                continue;
            }
            Rows[key] = c =>
            [
                SameAsSystemIo("null path", () => Call(method, null, c.Missing), () => Call(twin, null, c.Missing)),
                SameAsSystemIo("empty path", () => Call(method, "", c.Missing), () => Call(twin, "", c.Missing)),
                SameAsSystemIo("a directory", () => Call(method, c.DirectoryPath, c.Missing), () => Call(twin, c.DirectoryPath, c.Missing)),
            ];
        }
    }

    private static Row SpanRow(string name, Type[] parameters) => c =>
    {
        bool encoding = parameters.Length == 3;
        Action<string?> spindle = name switch
        {
            "WriteAllBytes" => p => SpindleFile.WriteAllBytes(p!, new ReadOnlySpan<byte>([1])),
            "AppendAllBytes" => p => SpindleFile.AppendAllBytes(p!, new ReadOnlySpan<byte>([1])),
            "WriteAllText" => p => { if (encoding) SpindleFile.WriteAllText(p!, "x".AsSpan(), Encoding.UTF8); else SpindleFile.WriteAllText(p!, "x".AsSpan()); },
            _ => p => { if (encoding) SpindleFile.AppendAllText(p!, "x".AsSpan(), Encoding.UTF8); else SpindleFile.AppendAllText(p!, "x".AsSpan()); },
        };
        Action<string?> system = name switch
        {
            "WriteAllBytes" => p => File.WriteAllBytes(p!, new ReadOnlySpan<byte>([1])),
            "AppendAllBytes" => p => File.AppendAllBytes(p!, new ReadOnlySpan<byte>([1])),
            "WriteAllText" => p => { if (encoding) File.WriteAllText(p!, "x".AsSpan(), Encoding.UTF8); else File.WriteAllText(p!, "x".AsSpan()); },
            _ => p => { if (encoding) File.AppendAllText(p!, "x".AsSpan(), Encoding.UTF8); else File.AppendAllText(p!, "x".AsSpan()); },
        };
        return
        [
            SameAsSystemIo("null path", () => spindle(null), () => system(null)),
            SameAsSystemIo("empty path", () => spindle(""), () => system("")),
            SameAsSystemIo("a directory", () => spindle(c.DirectoryPath), () => system(c.DirectoryPath)),
        ];
    };

    /// <summary>Calls a content method with <paramref name="path"/> and harmless other arguments, waiting for its task or sequence.</summary>
    private static void Call(MethodInfo method, string? path, string missing)
    {
        object?[] arguments = method.GetParameters().Select(p => p.Position == 0 ? path : Argument(p.ParameterType)).ToArray();
        try
        {
            object? result = method.Invoke(null, arguments);
            switch (result)
            {
                case Task task:
                    task.GetAwaiter().GetResult();
                    break;
                case IAsyncEnumerable<string> lines:
                    lines.GetAsyncEnumerator().MoveNextAsync().AsTask().GetAwaiter().GetResult();
                    break;
                case IEnumerable<string> lines:
                    lines.GetEnumerator().MoveNext();
                    break;
            }
        }
        catch (TargetInvocationException e)
        {
            ExceptionDispatchInfo.Throw(e.InnerException!);
        }
    }

    private static object? Argument(Type type) => type == typeof(byte[]) ? new byte[] { 1 }
        : type == typeof(ReadOnlyMemory<byte>) ? new ReadOnlyMemory<byte>([1])
        : type == typeof(ReadOnlyMemory<char>) ? "x".AsMemory()
        : type == typeof(string) ? "x"
        : type == typeof(string[]) || type == typeof(IEnumerable<string>) ? new[] { "x" }
        : type == typeof(Encoding) ? Encoding.UTF8
        : type == typeof(CancellationToken) ? CancellationToken.None
        : null;
}
