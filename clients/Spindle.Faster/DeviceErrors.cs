namespace Spindle.Faster;

/// <summary>
/// The error code FASTER's completion callback receives: the low 16 bits of an <see cref="IOException"/>'s
/// HResult (what <c>ManagedLocalStorageDevice</c> reports), else <see cref="uint.MaxValue"/>.
/// </summary>
internal static class DeviceErrors
{

    internal static uint CodeFor(Exception error)
    {
        if (error is IOException io && (io.HResult & 0xFFFF) != 0)
        {
            return (uint)(io.HResult & 0xFFFF);
        }
        return uint.MaxValue;
    }
}
