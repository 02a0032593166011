namespace Spindle.Engines;

/// <summary>Maps an <see cref="IoEngine"/> request to the engine that serves it.</summary>
internal static class EngineSelector
{
    /// <summary>The engine <see cref="IoEngine.Auto"/> resolves to in this process.</summary>
    internal static FileIoEngine Default => SyncEngine.Instance;

    internal static FileIoEngine Get(IoEngine requested) => requested switch
    {
        IoEngine.Sync => SyncEngine.Instance,
        _ => Default,
    };
}
