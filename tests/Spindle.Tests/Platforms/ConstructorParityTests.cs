using System.Reflection;

namespace Spindle.Tests.Platforms;

/// <summary>Moving from FileStream is a rename: every constructor FileStream offers (not obsolete), SpindleFileStream offers too.</summary>
public class ConstructorParityTests
{
    [Fact]
    public void Every_non_obsolete_FileStream_constructor_has_a_SpindleFileStream_twin()
    {
        static string Signature(ConstructorInfo constructor)
            => string.Join(", ", constructor.GetParameters().Select(p => p.ParameterType.FullName));

        string[] fileStream = typeof(FileStream).GetConstructors()
            .Where(c => c.GetCustomAttribute<ObsoleteAttribute>() is null)
            .Select(Signature).Order().ToArray();
        HashSet<string> spindle = typeof(SpindleFileStream).GetConstructors().Select(Signature).ToHashSet();

        Assert.NotEmpty(fileStream);
        string[] missing = fileStream.Where(signature => !spindle.Contains(signature)).ToArray();
        Assert.True(missing.Length == 0, "SpindleFileStream lacks: " + string.Join(" | ", missing));
    }

    [Fact]
    public void The_two_argument_handle_constructor_buffers_like_FileStream()
    {
        using var directory = new Infrastructure.TempDirectory();
        string path = directory.File("h");
        File.WriteAllBytes(path, new byte[] { 1, 2, 3 });
        using var stream = new SpindleFileStream(SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite), FileAccess.ReadWrite);
        using var reference = new FileStream(File.OpenHandle(path, FileMode.Open, FileAccess.Read), FileAccess.Read);
        stream.Position = 3;
        stream.WriteByte(4);
        // Buffered as FileStream's 4096-byte default: the byte is not in the file until a flush.
        Assert.Equal(3, new FileInfo(path).Length);
        stream.Flush();
        Assert.Equal(new byte[] { 1, 2, 3, 4 }, File.ReadAllBytes(path));
        Assert.Equal(4, reference.Length);
    }
}
