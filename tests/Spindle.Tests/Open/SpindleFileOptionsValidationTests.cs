namespace Spindle.Tests.Open;

/// <summary>SpindleFileOptions validates each member exactly as FileStreamOptions does.</summary>
public class SpindleFileOptionsValidationTests
{
    [Fact]
    public void Defaults_match_FileStreamOptions()
    {
        var system = new FileStreamOptions();
        var spindle = new SpindleFileOptions();
        Assert.Equal(system.Mode, spindle.Mode);
        Assert.Equal(system.Access, spindle.Access);
        Assert.Equal(system.Share, spindle.Share);
        Assert.Equal(system.Options, spindle.Options);
        Assert.Equal(system.BufferSize, spindle.BufferSize);
        Assert.Equal(system.PreallocationSize, spindle.PreallocationSize);
        Assert.Equal(system.UnixCreateMode, spindle.UnixCreateMode);
        Assert.Equal(IoEngine.Auto, spindle.Engine);
    }

    [Fact]
    public void Every_setter_accepts_and_rejects_what_FileStreamOptions_does()
    {
        var differences = new List<string>();
        void Check<T>(string name, T value, Action<FileStreamOptions, T> setSystem, Action<SpindleFileOptions, T> setSpindle,
            Func<FileStreamOptions, object?> getSystem, Func<SpindleFileOptions, object?> getSpindle)
        {
            var system = new FileStreamOptions();
            var spindle = new SpindleFileOptions();
            string expected = Infrastructure.Outcome.Of(() => setSystem(system, value)) + " " + getSystem(system);
            string actual = Infrastructure.Outcome.Of(() => setSpindle(spindle, value)) + " " + getSpindle(spindle);
            if (expected != actual)
            {
                differences.Add($"{name}={value}: System.IO {expected}, Spindle {actual}");
            }
        }

        foreach (int value in new[] { -1, 0, 1, 2, 3, 4, 5, 6, 7, 100 })
        {
            Check("Mode", (FileMode)value, (o, v) => o.Mode = v, (o, v) => o.Mode = v, o => o.Mode, o => o.Mode);
            Check("Access", (FileAccess)value, (o, v) => o.Access = v, (o, v) => o.Access = v, o => o.Access, o => o.Access);
        }
        foreach (int value in new[] { -1, 0, 1, 2, 3, 4, 7, 8, 0x10, 0x13, 0x17, 0x18, 0x20, 0x40 })
        {
            Check("Share", (FileShare)value, (o, v) => o.Share = v, (o, v) => o.Share = v, o => o.Share, o => o.Share);
        }
        var options = new List<FileOptions> { (FileOptions)(-1), (FileOptions)1, (FileOptions)0x20000000, (FileOptions)0x02000000, (FileOptions)0x40000000 };
        options.AddRange(Enum.GetValues<FileOptions>());
        for (int bit = 0; bit < 32; bit++)
        {
            options.Add((FileOptions)(1 << bit));
        }
        options.Add(FileOptions.WriteThrough | FileOptions.Asynchronous | FileOptions.RandomAccess | FileOptions.DeleteOnClose
            | FileOptions.SequentialScan | FileOptions.Encrypted | (FileOptions)0x20000000);
        foreach (FileOptions value in options)
        {
            Check("Options", value, (o, v) => o.Options = v, (o, v) => o.Options = v, o => o.Options, o => o.Options);
        }
        foreach (long value in new[] { long.MinValue, -1L, 0L, 1L, long.MaxValue })
        {
            Check("PreallocationSize", value, (o, v) => o.PreallocationSize = v, (o, v) => o.PreallocationSize = v, o => o.PreallocationSize, o => o.PreallocationSize);
        }
        foreach (int value in new[] { int.MinValue, -1, 0, 1, 4096, int.MaxValue })
        {
            Check("BufferSize", value, (o, v) => o.BufferSize = v, (o, v) => o.BufferSize = v, o => o.BufferSize, o => o.BufferSize);
        }
        foreach (int? value in new int?[] { null, 0, 0x1FF, 0xFFF, 0x1000, -1 })
        {
            UnixFileMode? mode = (UnixFileMode?)value;
            Check("UnixCreateMode", mode, (o, v) => o.UnixCreateMode = v, (o, v) => o.UnixCreateMode = v, o => o.UnixCreateMode, o => o.UnixCreateMode);
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public void Copying_FileStreamOptions_keeps_every_value()
    {
        var system = new FileStreamOptions
        {
            Mode = FileMode.Create, Access = FileAccess.Write, Share = FileShare.None, Options = FileOptions.WriteThrough,
            BufferSize = 1, PreallocationSize = 1234, UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite,
        };
        var spindle = new SpindleFileOptions(system);
        Assert.Equal((system.Mode, system.Access, system.Share, system.Options, system.BufferSize, system.PreallocationSize, system.UnixCreateMode),
            (spindle.Mode, spindle.Access, spindle.Share, spindle.Options, spindle.BufferSize, spindle.PreallocationSize, spindle.UnixCreateMode));
        Assert.Throws<ArgumentNullException>(() => new SpindleFileOptions(null!));
    }

    [Fact]
    public void Open_with_options_validates_like_FileStream_constructor()
    {
        using var directory = new Infrastructure.TempDirectory();
        string path = directory.File("f");
        var differences = new List<string>();
        void Check(string what, string? p, FileStreamOptions? system, SpindleFileOptions? spindle)
        {
            string expected = Infrastructure.Outcome.Of(() => new FileStream(p!, system!).Dispose()).ToString();
            string actual = Infrastructure.Outcome.Of(() => SpindleFile.OpenHandle(p!, spindle!).Dispose()).ToString();
            if (expected != actual)
            {
                differences.Add($"{what}: System.IO {expected}, Spindle {actual}");
            }
        }
        Check("null path", null, new FileStreamOptions(), new SpindleFileOptions());
        Check("empty path", "", new FileStreamOptions(), new SpindleFileOptions());
        Check("null options", path, null, null);
        Check("empty path and null options", "", null, null);
        Check("preallocation with Open", path, new FileStreamOptions { Mode = FileMode.OpenOrCreate, Access = FileAccess.Write, PreallocationSize = 10 },
            new SpindleFileOptions { Mode = FileMode.OpenOrCreate, Access = FileAccess.Write, PreallocationSize = 10 });
        Check("preallocation read-only", path, new FileStreamOptions { Mode = FileMode.Open, PreallocationSize = 10 },
            new SpindleFileOptions { Mode = FileMode.Open, PreallocationSize = 10 });
        Check("create mode with Truncate", path, new FileStreamOptions { Mode = FileMode.Truncate, Access = FileAccess.Write, UnixCreateMode = UnixFileMode.UserRead },
            new SpindleFileOptions { Mode = FileMode.Truncate, Access = FileAccess.Write, UnixCreateMode = UnixFileMode.UserRead });
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }
}
