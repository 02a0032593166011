using System.Reflection;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Files;

/// <summary>Moving from File's content methods is a rename: every overload File has, SpindleFile has, with the same return type.</summary>
[Collection(Spindle.Tests.Engines.SerialCollection.Name)] // allocation counts: no fault seam or meter armed by a parallel test
public class ContentParityTests
{
    private static readonly string[] s_contentMethods =
    [
        "ReadAllBytes", "ReadAllText", "ReadAllLines", "ReadLines", "WriteAllBytes", "WriteAllText", "WriteAllLines",
        "AppendAllBytes", "AppendAllText", "AppendAllLines",
    ];

    private static string Signature(MethodInfo method)
        => $"{method.ReturnType} {method.Name}({string.Join(", ", method.GetParameters().Select(p => p.ParameterType + (p.HasDefaultValue ? " = default" : "")))})";

    private static IEnumerable<MethodInfo> ContentMethods(Type type)
        => type.GetMethods(BindingFlags.Public | BindingFlags.Static)
            .Where(m => s_contentMethods.Contains(m.Name) || s_contentMethods.Contains(m.Name.Replace("Async", "")));

    [Fact]
    public void Every_content_method_of_File_has_a_SpindleFile_twin()
    {
        string[] file = ContentMethods(typeof(File)).Select(Signature).Order().ToArray();
        string[] spindle = ContentMethods(typeof(SpindleFile)).Select(Signature).Order().ToArray();
        Assert.True(file.Length >= 48, "File's content methods: " + file.Length);
        Assert.Equal(file, spindle);
    }

    [Fact]
    public async Task Reading_and_writing_a_small_file_allocates_only_what_is_returned()
    {
        if (Spindle.Portable.PassThrough.Enabled)
        {
            // Passed through, the calls are System.IO's own, with System.IO's allocations: nothing of Spindle's to measure.
            Console.WriteLine("passed through to System.IO: the allocation check is Spindle's own code only");
            return;
        }
        using var directory = new TempDirectory();
        string path = directory.File("small");
        byte[] contents = new byte[4096];
        Random.Shared.NextBytes(contents);
        string text = new string('t', 4096);
        File.WriteAllBytes(path, contents);
        for (int warm = 0; warm < 20; warm++)
        {
            await SpindleFile.ReadAllBytesAsync(path);
            SpindleFile.ReadAllBytes(path);
            SpindleFile.ReadAllText(path);
            await SpindleFile.WriteAllBytesAsync(path, contents);
            SpindleFile.WriteAllText(path, text);
        }
        // Again on this thread (the awaits may have moved it): the array pool's per-thread buckets are filled here.
        for (int warm = 0; warm < 5; warm++)
        {
            SpindleFile.ReadAllBytes(path);
            SpindleFile.ReadAllText(path);
            SpindleFile.WriteAllBytes(path, contents);
            SpindleFile.WriteAllText(path, text);
        }
        // The array of the result (4096 bytes and its header) and nothing per call beyond a few bytes of the open's own bookkeeping.
        long before = GC.GetAllocatedBytesForCurrentThread();
        byte[] bytes = SpindleFile.ReadAllBytes(path);
        long readBytes = GC.GetAllocatedBytesForCurrentThread() - before;
        before = GC.GetAllocatedBytesForCurrentThread();
        SpindleFile.WriteAllBytes(path, contents);
        long writeBytes = GC.GetAllocatedBytesForCurrentThread() - before;
        before = GC.GetAllocatedBytesForCurrentThread();
        SpindleFile.WriteAllText(path, text);
        long writeText = GC.GetAllocatedBytesForCurrentThread() - before;
        before = GC.GetAllocatedBytesForCurrentThread();
        string read = SpindleFile.ReadAllText(path);
        long readText = GC.GetAllocatedBytesForCurrentThread() - before;

        long handle = HandleCost(path);
        Assert.Equal(4096, bytes.Length);
        Assert.True(readBytes <= 4096 + 24 + handle, $"ReadAllBytes allocated {readBytes} bytes, the handle {handle}");
        Assert.True(writeBytes <= handle, $"WriteAllBytes allocated {writeBytes} bytes, the handle {handle}");
        Assert.True(writeText <= handle, $"WriteAllText allocated {writeText} bytes, the handle {handle}");
        Assert.True(readText <= 2 * 4096 + 32 + handle, $"ReadAllText allocated {readText} bytes (string {read.Length} chars), the handle {handle}");
    }

    /// <summary>What opening and closing a handle allocates (the SafeFileHandle and its path): not the content methods' doing.</summary>
    private static long HandleCost(string path)
    {
        SpindleFile.OpenHandle(path).Dispose();
        long before = GC.GetAllocatedBytesForCurrentThread();
        SpindleFile.OpenHandle(path).Dispose();
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }
}
