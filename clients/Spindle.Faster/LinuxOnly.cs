// SpindleDevice is O_DIRECT and io_uring through Spindle's Linux-only options: on Windows FASTER has its own
// native device. Said once for the platform analyzer instead of guarding each call.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]
