using Tsavorite.core;

namespace Spindle.Garnet;

/// <summary>
/// Puts Garnet's storage on Spindle in one line: every device Garnet opens (the store's log, the append-only file,
/// checkpoints and commit records) becomes a <see cref="SpindleStorageDevice"/>.
/// </summary>
/// <example>
/// <code>
/// var options = new GarnetServerOptions
/// {
///     EnableStorageTier = true,
///     LogDir = "/data/garnet",
///     DeviceFactoryCreator = new SpindleNamedDeviceFactoryCreator(),
/// };
/// using var server = new GarnetServer(options);
/// server.Start();
/// </code>
/// </example>
public sealed class SpindleNamedDeviceFactoryCreator : INamedDeviceFactoryCreator
{
    private readonly SpindleStorageDeviceOptions _options;

    /// <summary>Creates a creator whose devices use <paramref name="options"/> (null: the defaults, <c>O_DIRECT</c> and io_uring where available).</summary>
    /// <param name="options">The options of every device.</param>
    public SpindleNamedDeviceFactoryCreator(SpindleStorageDeviceOptions? options = null)
    {
        _options = options ?? SpindleStorageDeviceOptions.Default;
    }

    /// <inheritdoc/>
    public INamedDeviceFactory Create(string baseName) => new SpindleNamedDeviceFactory(baseName, _options);
}
