namespace Spindle.Clients.Tests;

/// <summary>LiteDB on SpindleFileStream against FileStream: the same workload gives the same answers and the same files.</summary>
public sealed class LiteDbTests
{
    private const int PageSize = 8192;       // LiteDB's page
    private const int CreationTimeOffset = 68; // HeaderPage.P_CREATION_TIME: 8 bytes, DateTime.UtcNow when the file is created
    private const int CreationTimeLength = 8;
    private const byte HeaderPageType = 1;   // PageType.Header, at byte 4 of every page

    [Theory]
    [MemberData(nameof(Engines.All), MemberType = typeof(Engines))]
    public void RandomDocumentWorkloadGivesEqualResultsAndEqualFiles(IoEngine engine)
    {
        using var directory = new TestDirectory();
        string systemPath = Path.Combine(directory.Path, "system.db");
        string spindlePath = Path.Combine(directory.Path, "spindle.db");

        // Each run in a fresh process: LiteDB draws index levels from one process-wide seeded Random,
        // so only a fresh process makes two runs build the same skip lists (and the same files).
        string[] expected = ChildProcess.RunToEnd("litedb", systemPath, "system");
        string[] actual = ChildProcess.RunToEnd("litedb", spindlePath, engine.ToString());

        Assert.Equal(expected.Length, actual.Length);
        for (int i = 0; i < expected.Length; i++)
        {
            Assert.Equal(expected[i], actual[i]);
        }
        AssertSameFile(systemPath, spindlePath);
        AssertSameFile(systemPath + "-log", spindlePath + "-log");
    }

    /// <summary>Byte for byte, except the creation time LiteDB writes into every copy of its header page.</summary>
    private static void AssertSameFile(string expectedPath, string actualPath)
    {
        byte[] expected = File.ReadAllBytes(expectedPath);
        byte[] actual = File.ReadAllBytes(actualPath);
        Assert.Equal(expected.Length, actual.Length);
        for (int page = 0; page + PageSize <= expected.Length; page += PageSize)
        {
            if (expected[page + 4] == HeaderPageType)
            {
                Assert.Equal(HeaderPageType, actual[page + 4]);
                expected.AsSpan(page + CreationTimeOffset, CreationTimeLength).Clear();
                actual.AsSpan(page + CreationTimeOffset, CreationTimeLength).Clear();
            }
        }
        int differ = expected.AsSpan().CommonPrefixLength(actual);
        Assert.True(differ == expected.Length, $"{Path.GetFileName(actualPath)} differs at byte {differ}");
    }
}
