using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Streams;

/// <summary>
/// A <see cref="FileStream"/> and a <see cref="SpindleFileStream"/> opened the same way on two files with
/// the same content; <see cref="Same(Action{Stream}, string)"/> runs an operation on both and demands the same outcome.
/// </summary>
internal sealed class StreamPair : IAsyncDisposable
{
    private readonly string _systemPath;
    private readonly string _spindlePath;

    internal StreamPair(TempDirectory dir, StreamConfiguration configuration, byte[] initial, FileMode mode = FileMode.Open, FileAccess access = FileAccess.ReadWrite)
    {
        string name = Guid.NewGuid().ToString("N");
        _systemPath = dir.File(name + "-system");
        _spindlePath = dir.File(name + "-spindle");
        File.WriteAllBytes(_systemPath, initial);
        File.WriteAllBytes(_spindlePath, initial);
        System = configuration.OpenSystem(_systemPath, mode, access);
        Spindle = configuration.OpenSpindle(_spindlePath, mode, access);
    }

    internal FileStream System { get; }

    internal SpindleFileStream Spindle { get; }

    internal StreamOutcome Same(Action<Stream> action, string what)
    {
        StreamOutcome expected = StreamOutcome.Of(() => action(System));
        StreamOutcome actual = StreamOutcome.Of(() => action(Spindle));
        Assert.True(expected == actual, $"{what}: System.IO {expected}, Spindle {actual}");
        return actual;
    }

    internal StreamOutcome Same<T>(Func<Stream, T> func, string what)
    {
        StreamOutcome expected = StreamOutcome.Of(() => func(System));
        StreamOutcome actual = StreamOutcome.Of(() => func(Spindle));
        Assert.True(expected == actual, $"{what}: System.IO {expected}, Spindle {actual}");
        return actual;
    }

    internal async Task<StreamOutcome> SameAsync(Func<Stream, Task> func, string what)
    {
        StreamOutcome expected = await StreamOutcome.OfAsync(() => func(System));
        StreamOutcome actual = await StreamOutcome.OfAsync(() => func(Spindle));
        Assert.True(expected == actual, $"{what}: System.IO {expected}, Spindle {actual}");
        return actual;
    }

    internal async Task<StreamOutcome> SameAsync<T>(Func<Stream, Task<T>> func, string what)
    {
        StreamOutcome expected = await StreamOutcome.OfAsync(() => func(System));
        StreamOutcome actual = await StreamOutcome.OfAsync(() => func(Spindle));
        Assert.True(expected == actual, $"{what}: System.IO {expected}, Spindle {actual}");
        return actual;
    }

    /// <summary>Position and length agree (or both throw the same).</summary>
    internal void SameState(string what)
    {
        Same(s => s.Position, what + ": Position");
        Same(s => s.Length, what + ": Length");
    }

    /// <summary>Disposes both streams and compares the files.</summary>
    internal async Task AssertSameFilesAsync()
    {
        await DisposeAsync();
        Assert.Equal(File.ReadAllBytes(_systemPath), File.ReadAllBytes(_spindlePath));
    }

    public async ValueTask DisposeAsync()
    {
        await System.DisposeAsync();
        await Spindle.DisposeAsync();
    }
}
