using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Hosting;

namespace Spindle.AspNetCore.Tests;

using Spindle.Clients.Tests;

/// <summary>
/// Symbolic links and dot-directories under a served root: a link is served with its target's length and bytes, a
/// link that leaves the root is served unless <see cref="SpindleFileProviderOptions.RefuseLinksOutsideRoot"/> is set,
/// and where <see cref="PhysicalFileProvider"/> answers correctly (a regular file reached through a linked
/// directory, a file in a dot-directory) the responses are the same as its.
/// </summary>
public sealed class SymlinkTests : IAsyncLifetime
{
    private readonly TestDirectory _root = new();
    private readonly TestDirectory _outside = new();
    private readonly byte[] _inside = new byte[10_000];
    private readonly byte[] _secret = new byte[3_000];
    private IHost? _physical;
    private IHost? _spindle;
    private IHost? _refusing;

    public async Task InitializeAsync()
    {
        var random = new Random(34);
        random.NextBytes(_inside);
        random.NextBytes(_secret);
        File.WriteAllBytes(Path.Combine(_root.Path, "target.bin"), _inside);
        File.CreateSymbolicLink(Path.Combine(_root.Path, "relative.bin"), "target.bin");
        File.CreateSymbolicLink(Path.Combine(_root.Sub("deep"), "up.bin"), "../target.bin");
        File.CreateSymbolicLink(Path.Combine(_root.Path, "chain.bin"), "relative.bin");
        File.WriteAllBytes(Path.Combine(_outside.Path, "secret.bin"), _secret);
        File.CreateSymbolicLink(Path.Combine(_root.Path, "out.bin"), Path.Combine(_outside.Path, "secret.bin"));
        Directory.CreateSymbolicLink(Path.Combine(_root.Path, "outdir"), _outside.Path);
        File.CreateSymbolicLink(Path.Combine(_root.Path, "dangling.bin"), "missing.bin");
        File.WriteAllText(Path.Combine(_root.Sub(".git"), "config"), "[core]\n");
        _physical = await StaticFilesTests.Start(app => app.UseStaticFiles(new StaticFileOptions { FileProvider = new PhysicalFileProvider(_root.Path) }));
        _spindle = await StaticFilesTests.Start(app => app.UseSpindleStaticFiles(_root.Path));
        _refusing = await StaticFilesTests.Start(app => app.UseSpindleStaticFiles(_root.Path, new SpindleFileProviderOptions { RefuseLinksOutsideRoot = true }));
    }

    public async Task DisposeAsync()
    {
        foreach (IHost? host in new[] { _physical, _spindle, _refusing })
        {
            if (host is not null)
            {
                await host.StopAsync();
                host.Dispose();
            }
        }
        _root.Dispose();
        _outside.Dispose();
    }

    private static async Task<(HttpStatusCode Status, long? Length, byte[] Body)> Get(IHost host, string path)
    {
        using HttpClient client = host.GetTestClient();
        using HttpResponseMessage response = await client.GetAsync(path);
        return (response.StatusCode, response.Content.Headers.ContentLength, await response.Content.ReadAsByteArrayAsync());
    }

    [Theory]
    [InlineData("/relative.bin")]
    [InlineData("/deep/up.bin")]
    [InlineData("/chain.bin")]
    public async Task A_link_to_a_file_inside_the_root_is_served_with_its_targets_length_and_bytes(string path)
    {
        foreach (IHost host in new[] { _spindle!, _refusing! })
        {
            var (status, length, body) = await Get(host, path);
            Assert.Equal(HttpStatusCode.OK, status);
            Assert.Equal(_inside.Length, length);
            Assert.Equal(_inside, body);
        }
    }

    [Fact]
    public async Task A_range_of_a_linked_file_is_the_same_range_of_its_target()
    {
        using HttpClient client = _spindle!.GetTestClient();
        using var request = new HttpRequestMessage(HttpMethod.Get, "/relative.bin");
        request.Headers.TryAddWithoutValidation("Range", "bytes=9000-");
        using HttpResponseMessage response = await client.SendAsync(request);
        Assert.Equal(HttpStatusCode.PartialContent, response.StatusCode);
        Assert.Equal(_inside[9000..], await response.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public void The_provider_reports_a_links_target_facts()
    {
        using var spindle = new SpindleFileProvider(_root.Path);
        var target = new FileInfo(Path.Combine(_root.Path, "target.bin"));
        IFileInfo link = spindle.GetFileInfo("chain.bin");
        Assert.True(link.Exists);
        Assert.Equal(target.Length, link.Length);
        Assert.Equal(new DateTimeOffset(target.LastWriteTimeUtc), link.LastModified);
        Assert.Equal(Path.Combine(_root.Path, "chain.bin"), link.PhysicalPath);
        Assert.False(spindle.GetFileInfo("dangling.bin").Exists);
    }

    [Fact]
    public async Task A_link_out_of_the_root_is_served_by_default()
    {
        var (status, length, body) = await Get(_spindle!, "/out.bin");
        Assert.Equal((HttpStatusCode.OK, (long?)_secret.Length), (status, length));
        Assert.Equal(_secret, body);
        (status, length, body) = await Get(_spindle!, "/outdir/secret.bin");
        Assert.Equal((HttpStatusCode.OK, (long?)_secret.Length), (status, length));
        Assert.Equal(_secret, body);
    }

    [Theory]
    [InlineData("/outdir/secret.bin")]
    [InlineData("/.git/config")]
    [InlineData("/target.bin")]
    [InlineData("/dangling.bin")]
    public async Task Where_PhysicalFileProvider_is_right_the_responses_are_its(string path)
    {
        Assert.Equal(await StaticFilesTests.Fetch(_physical!, HttpMethod.Get, path), await StaticFilesTests.Fetch(_spindle!, HttpMethod.Get, path));
    }

    [Theory]
    [InlineData("/out.bin")]
    [InlineData("/outdir/secret.bin")]
    public async Task RefuseLinksOutsideRoot_answers_404_for_a_file_whose_real_path_is_outside(string path)
    {
        Assert.Equal(HttpStatusCode.NotFound, (await Get(_refusing!, path)).Status);
        using var provider = new SpindleFileProvider(_root.Path, new SpindleFileProviderOptions { RefuseLinksOutsideRoot = true });
        Assert.False(provider.GetFileInfo(path).Exists);
        Assert.False(provider.GetDirectoryContents("outdir").Exists);
        Assert.DoesNotContain(provider.GetDirectoryContents(""), file => file.Name is "out.bin" or "outdir");
        Assert.Contains(provider.GetDirectoryContents(""), file => file.Name == "relative.bin");
    }

    [Fact]
    public void RefuseLinksOutsideRoot_holds_when_the_root_itself_is_reached_through_a_link()
    {
        string linkedRoot = Path.Combine(_outside.Path, "site");
        Directory.CreateSymbolicLink(linkedRoot, _root.Path);
        using var provider = new SpindleFileProvider(linkedRoot, new SpindleFileProviderOptions { RefuseLinksOutsideRoot = true });
        Assert.True(provider.GetFileInfo("relative.bin").Exists);
        Assert.True(provider.GetFileInfo("target.bin").Exists);
        Assert.False(provider.GetFileInfo("out.bin").Exists);
    }
}
