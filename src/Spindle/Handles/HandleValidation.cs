using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Handles;

/// <summary>System.IO's checks of a handle argument (null, invalid, closed), with the same exceptions and order.</summary>
internal static class HandleValidation
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void ValidateHandle(SafeFileHandle handle)
    {
        if (handle is null)
        {
            ThrowHelper.ThrowArgumentNull(nameof(handle));
        }
        if (handle.IsInvalid)
        {
            ThrowHelper.ThrowInvalidHandle(nameof(handle));
        }
        if (handle.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
    }
}
