using LiteDB;

namespace Spindle.Clients.Probe;

/// <summary>The LiteDB workload of the tests: the same operations on any pair of streams.</summary>
public static class LiteDbWorkload
{
    /// <summary>Runs the workload on <paramref name="path"/> through FileStream (<paramref name="engine"/> null) or SpindleFileStream.</summary>
    public static List<string> Run(string path, IoEngine? engine)
    {
        if (engine is IoEngine chosen)
        {
            var options = new SpindleFileOptions { Mode = FileMode.CreateNew, Access = FileAccess.ReadWrite, BufferSize = 8192, Options = FileOptions.RandomAccess, Engine = chosen };
            using var data = new SpindleFileStream(path, options);
            using var log = new SpindleFileStream(path + "-log", options);
            return Run(data, log);
        }
        using (var data = new FileStream(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.None, 8192, FileOptions.RandomAccess))
        using (var log = new FileStream(path + "-log", FileMode.CreateNew, FileAccess.ReadWrite, FileShare.None, 8192, FileOptions.RandomAccess))
        {
            return Run(data, log);
        }
    }

    /// <summary>Inserts, index queries, updates, deletes and a checkpoint, with explicit ids; returns every answer as text.</summary>
    public static List<string> Run(Stream data, Stream log)
    {
        var answers = new List<string>();
        var random = new Random(5);
        using var db = new LiteDatabase(data, logStream: log);
        var people = db.GetCollection("people");
        var orders = db.GetCollection("orders");
        people.EnsureIndex("age");
        people.EnsureIndex("name");
        orders.EnsureIndex("person");
        var when = new DateTime(2024, 1, 1, 0, 0, 0, DateTimeKind.Utc);
        for (int id = 1; id <= 3_000; id++)
        {
            people.Insert(new BsonDocument
            {
                ["_id"] = id,
                ["name"] = $"person-{random.Next(1_000):D4}",
                ["age"] = random.Next(18, 90),
                ["since"] = when.AddMinutes(random.Next(1_000_000)),
                ["bio"] = new string((char)('a' + random.Next(26)), random.Next(10, 600)),
            });
        }
        for (int id = 1; id <= 2_000; id++)
        {
            orders.Insert(new BsonDocument { ["_id"] = id, ["person"] = random.Next(1, 3_001), ["total"] = random.Next(1, 100_000) / 100.0 });
        }
        for (int q = 0; q < 50; q++)
        {
            int age = random.Next(18, 90);
            answers.Add(string.Join(",", people.Find(Query.EQ("age", age)).Select(d => d["_id"].AsInt32)));
            answers.Add(people.Count(Query.Between("age", age, age + 5)).ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
        for (int u = 0; u < 1_000; u++)
        {
            var doc = people.FindById(random.Next(1, 3_001));
            if (doc != null)
            {
                doc["age"] = random.Next(18, 90);
                doc["bio"] = new string('z', random.Next(0, 900));
                people.Update(doc);
            }
        }
        for (int d = 0; d < 500; d++)
        {
            people.Delete(random.Next(1, 3_001));
            orders.DeleteMany(Query.EQ("person", random.Next(1, 3_001)));
        }
        db.Checkpoint();
        for (int q = 0; q < 50; q++)
        {
            string name = $"person-{random.Next(1_000):D4}";
            answers.Add(string.Join(",", people.Find(Query.EQ("name", name)).Select(d => d.ToString())));
            answers.Add(string.Join(",", orders.Find(Query.EQ("person", random.Next(1, 3_001))).Select(d => d.ToString())));
        }
        // Every collection and index read back in full.
        answers.Add(string.Join("\n", people.FindAll().Select(d => JsonSerializer.Serialize(d))));
        answers.Add(string.Join("\n", orders.FindAll().Select(d => JsonSerializer.Serialize(d))));
        answers.Add(string.Join(",", people.Find(Query.All("age")).Select(d => d["_id"].AsInt32)));
        answers.Add(string.Join(",", people.Find(Query.All("name", Query.Descending)).Select(d => d["_id"].AsInt32)));
        answers.Add(string.Join(",", orders.Find(Query.All("person")).Select(d => d["_id"].AsInt32)));
        answers.Add(string.Join(",", db.GetCollection("$indexes").FindAll().Select(d => d.ToString())));
        return answers;
    }
}
