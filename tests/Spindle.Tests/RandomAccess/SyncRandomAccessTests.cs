using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

public class SyncRandomAccessTests
{
    [Fact]
    public void Write_then_read_matches_System_IO_bytes_on_disk()
    {
        using var dir = new TempDirectory();
        byte[] data = new byte[10_000];
        new Random(1).NextBytes(data);

        using (var spindle = SpindleFile.OpenHandle(dir.File("s"), FileMode.Create, FileAccess.ReadWrite))
        using (var system = File.OpenHandle(dir.File("d"), FileMode.Create, FileAccess.ReadWrite))
        {
            SpindleRandomAccess.Write(spindle, data, 100);
            System.IO.RandomAccess.Write(system, data, 100);
            Assert.Equal(System.IO.RandomAccess.GetLength(system), SpindleRandomAccess.GetLength(spindle));

            var a = new byte[20_000];
            var b = new byte[20_000];
            Assert.Equal(System.IO.RandomAccess.Read(system, a, 50), SpindleRandomAccess.Read(spindle, b, 50));
            Assert.Equal(a, b);
        }
        Assert.Equal(File.ReadAllBytes(dir.File("d")), File.ReadAllBytes(dir.File("s")));
    }
}
