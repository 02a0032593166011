using System.Diagnostics.Metrics;
using System.Net.Http.Headers;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Hosting;
using Spindle.AspNetCore;

namespace Spindle.AspNetCore.Tests;

using Spindle.Clients.Tests;

/// <summary>
/// ASP.NET Core's static files on Spindle against the same middleware on <see cref="PhysicalFileProvider"/>: the
/// same requests (whole files, HEAD, every kind of range, conditional requests, missing files) must give the same
/// status, headers and bytes, and Spindle must be the one reading.
/// </summary>
public sealed class StaticFilesTests : IAsyncLifetime
{
    private readonly TestDirectory _directory = new();
    private IHost? _physical;
    private IHost? _spindle;

    public async Task InitializeAsync()
    {
        var random = new Random(22);
        foreach (var (name, size) in new[] { ("empty.txt", 0), ("small.css", 4096), ("odd.js", 4097), ("large.bin", 1 << 20) })
        {
            byte[] bytes = new byte[size];
            random.NextBytes(bytes);
            File.WriteAllBytes(Path.Combine(_directory.Path, name), bytes);
        }
        File.WriteAllText(Path.Combine(_directory.Sub("sub"), "index.html"), "<p>hi</p>");
        _physical = await Start(app => app.UseStaticFiles(new StaticFileOptions { FileProvider = new PhysicalFileProvider(_directory.Path) }));
        _spindle = await Start(app => app.UseSpindleStaticFiles(_directory.Path));
    }

    internal static async Task<IHost> Start(Action<IApplicationBuilder> configure)
    {
        IHost host = new HostBuilder()
            .ConfigureWebHost(web => web.UseTestServer().Configure(configure))
            .Build();
        await host.StartAsync();
        return host;
    }

    public async Task DisposeAsync()
    {
        foreach (IHost? host in new[] { _physical, _spindle })
        {
            if (host is not null)
            {
                await host.StopAsync();
                host.Dispose();
            }
        }
        _directory.Dispose();
    }

    /// <summary>Everything a client sees of a response, as text.</summary>
    internal static async Task<string> Fetch(IHost host, HttpMethod method, string path, Action<HttpRequestHeaders>? headers = null)
    {
        using HttpClient client = host.GetTestClient();
        using var request = new HttpRequestMessage(method, path);
        headers?.Invoke(request.Headers);
        using HttpResponseMessage response = await client.SendAsync(request);
        byte[] body = await response.Content.ReadAsByteArrayAsync();
        IEnumerable<string> all = response.Headers.Concat(response.Content.Headers)
            .Where(h => h.Key != "Date")
            .OrderBy(h => h.Key)
            .Select(h => $"{h.Key}: {string.Join(",", h.Value)}");
        return $"{(int)response.StatusCode}\n{string.Join("\n", all)}\nbody {body.Length} {Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(body))}";
    }

    [Theory]
    [InlineData("/small.css", null)]
    [InlineData("/odd.js", null)]
    [InlineData("/large.bin", null)]
    [InlineData("/empty.txt", null)]
    [InlineData("/sub/index.html", null)]
    [InlineData("/missing.txt", null)]
    [InlineData("/sub", null)]
    [InlineData("/large.bin", "bytes=0-99")]
    [InlineData("/large.bin", "bytes=-100")]
    [InlineData("/large.bin", "bytes=1000-")]
    [InlineData("/large.bin", "bytes=100-200000")]
    [InlineData("/large.bin", "bytes=0-1,5-9")]
    [InlineData("/large.bin", "bytes=2000000-")]
    [InlineData("/small.css", "bytes=4095-")]
    [InlineData("/empty.txt", "bytes=0-")]
    public async Task Responses_are_the_same_as_PhysicalFileProvider(string path, string? range)
    {
        void Headers(HttpRequestHeaders headers)
        {
            if (range is not null)
            {
                headers.TryAddWithoutValidation("Range", range);
            }
        }
        Assert.Equal(await Fetch(_physical!, HttpMethod.Get, path, Headers), await Fetch(_spindle!, HttpMethod.Get, path, Headers));
        Assert.Equal(await Fetch(_physical!, HttpMethod.Head, path, Headers), await Fetch(_spindle!, HttpMethod.Head, path, Headers));
    }

    [Fact]
    public async Task ETags_and_conditional_requests_are_the_same_as_PhysicalFileProvider()
    {
        using HttpClient client = _physical!.GetTestClient();
        using HttpResponseMessage first = await client.GetAsync("/small.css");
        string etag = first.Headers.ETag!.Tag;
        string modified = first.Content.Headers.LastModified!.Value.ToString("R");
        Action<HttpRequestHeaders>[] conditions =
        [
            h => h.TryAddWithoutValidation("If-None-Match", etag),
            h => h.TryAddWithoutValidation("If-None-Match", "\"other\""),
            h => h.TryAddWithoutValidation("If-Match", "\"other\""),
            h => h.TryAddWithoutValidation("If-Modified-Since", modified),
            h => { h.TryAddWithoutValidation("If-Range", etag); h.TryAddWithoutValidation("Range", "bytes=10-20"); },
            h => { h.TryAddWithoutValidation("If-Range", "\"stale\""); h.TryAddWithoutValidation("Range", "bytes=10-20"); },
        ];
        foreach (Action<HttpRequestHeaders> condition in conditions)
        {
            Assert.Equal(await Fetch(_physical!, HttpMethod.Get, "/small.css", condition), await Fetch(_spindle!, HttpMethod.Get, "/small.css", condition));
        }
    }

    [Fact]
    public async Task Spindle_reads_the_bytes()
    {
        long bytes = 0;
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "Spindle" && instrument.Name == "spindle.io.bytes")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, _, _) => Interlocked.Add(ref bytes, value));
        listener.Start();
        await Fetch(_spindle!, HttpMethod.Get, "/large.bin");
        listener.RecordObservableInstruments();
        Assert.True(Interlocked.Read(ref bytes) >= 1 << 20, $"Spindle read {bytes} bytes");
    }

    [Fact]
    public void The_provider_gives_PhysicalFileProvider_facts_and_a_Spindle_stream()
    {
        using var physical = new PhysicalFileProvider(_directory.Path);
        using var spindle = new SpindleFileProvider(_directory.Path);
        foreach (string path in new[] { "small.css", "large.bin", "sub", "missing", "sub/index.html" })
        {
            IFileInfo expected = physical.GetFileInfo(path), actual = spindle.GetFileInfo(path);
            Assert.Equal((expected.Exists, expected.IsDirectory, expected.Name, expected.PhysicalPath),
                (actual.Exists, actual.IsDirectory, actual.Name, actual.PhysicalPath));
            if (expected.Exists)
            {
                Assert.Equal((expected.Length, expected.LastModified), (actual.Length, actual.LastModified));
            }
        }
        Assert.Equal(physical.GetDirectoryContents("").Select(f => f.Name).Order(), spindle.GetDirectoryContents("").Select(f => f.Name).Order());
        using Stream stream = spindle.GetFileInfo("large.bin").CreateReadStream();
        Assert.IsType<SpindleFileStream>(stream);
        var copy = new MemoryStream();
        stream.CopyTo(copy);
        Assert.Equal(File.ReadAllBytes(Path.Combine(_directory.Path, "large.bin")), copy.ToArray());
    }
}
