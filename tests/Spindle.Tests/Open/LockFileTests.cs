using Microsoft.Win32.SafeHandles;

namespace Spindle.Tests.Open;

/// <summary>
/// The lock-file pattern (OpenOrCreate + FileShare.None + DeleteOnClose) gives mutual exclusion across
/// Spindle and System.IO: an owner deletes the file while holding the lock, so a waiter that opened the
/// old file must notice, after locking, that the path moved on, and open again.
/// </summary>
public class LockFileTests
{
    [Fact]
    public void Lock_file_is_held_by_one_owner_at_a_time_across_both_libraries()
    {
        using var directory = new Infrastructure.TempDirectory();
        string path = directory.File("lock");
        int inside = 0;
        int overlaps = 0;
        int[] acquired = new int[2];
        int[] attempts = new int[2]; // attempts each side has finished, acquired or refused
        int[] yielding = new int[2]; // 1 while a side lets the other in
        var start = DateTime.UtcNow;
        // Contend for at least 1.5 s and until both sides got the lock a few times (at most 10 s).
        bool Done() => DateTime.UtcNow - start > TimeSpan.FromSeconds(10) ||
            (DateTime.UtcNow - start > TimeSpan.FromSeconds(1.5) && Volatile.Read(ref acquired[0]) > 10 && Volatile.Read(ref acquired[1]) > 10);

        void Contend(int who, Func<SafeFileHandle> open)
        {
            int other = 1 - who;
            while (!Done())
            {
                SafeFileHandle handle;
                try
                {
                    handle = open();
                }
                catch (IOException)
                {
                    Interlocked.Increment(ref attempts[who]);
                    continue; // held by the other side
                }
                using (handle)
                {
                    if (Interlocked.Increment(ref inside) != 1)
                    {
                        Interlocked.Increment(ref overlaps);
                    }
                    Interlocked.Increment(ref acquired[who]);
                    Thread.SpinWait(200);
                    Interlocked.Decrement(ref inside);
                }
                Interlocked.Increment(ref attempts[who]);
                // Let the other side in: wait until it finished two attempts, the second begun after this release and
                // so while this side held nothing. Left to timing, the faster library can take the lock every time
                // (one run: 165,818 to 0). Both sides try while the other holds the lock, so they still contend.
                Volatile.Write(ref yielding[who], 1);
                int seen = Volatile.Read(ref attempts[other]);
                while (!Done() && Volatile.Read(ref attempts[other]) < seen + 2 && Volatile.Read(ref yielding[other]) == 0)
                {
                    Thread.Yield();
                }
                Volatile.Write(ref yielding[who], 0);
            }
        }

        FileOptions options = FileOptions.DeleteOnClose;
        Task[] tasks =
        [
            Task.Run(() => Contend(0, () => SpindleFile.OpenHandle(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None, options))),
            Task.Run(() => Contend(1, () => File.OpenHandle(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None, options))),
        ];
        Assert.True(Task.WaitAll(tasks, TimeSpan.FromSeconds(30)));
        Assert.Equal(0, overlaps);
        Assert.True(acquired[0] > 0 && acquired[1] > 0, $"acquisitions: Spindle {acquired[0]}, System.IO {acquired[1]}");
        Assert.False(File.Exists(path));
    }
}
