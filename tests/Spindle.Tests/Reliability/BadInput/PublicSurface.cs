using System.Reflection;

namespace Spindle.Tests.Reliability.BadInput;

/// <summary>Every public member of the Spindle assembly, named by a readable signature.</summary>
public static class PublicSurface
{
    public static IEnumerable<(string Key, MemberInfo Member)> Members()
    {
        foreach (Type type in typeof(SpindleFile).Assembly.GetExportedTypes().OrderBy(t => t.FullName, StringComparer.Ordinal))
        {
            if (type.IsEnum)
            {
                yield return ($"{Name(type)} (enum)", type);
                continue;
            }
            const BindingFlags all = BindingFlags.Public | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;
            foreach (MethodBase method in type.GetConstructors(all).Cast<MethodBase>().Concat(type.GetMethods(all)))
            {
                yield return (Key(type, method), method);
            }
            foreach (FieldInfo field in type.GetFields(all))
            {
                yield return ($"{Name(type)}.{field.Name} (field)", field);
            }
            foreach (EventInfo e in type.GetEvents(all))
            {
                yield return ($"{Name(type)}.{e.Name} (event)", e);
            }
        }
    }

    public static string Key(Type type, MethodBase method) =>
        $"{Name(type)}.{method.Name}({string.Join(", ", method.GetParameters().Select(p => Name(p.ParameterType)))})";

    private static string Name(Type type)
    {
        if (type.IsByRef)
        {
            return Name(type.GetElementType()!) + "&";
        }
        if (type.IsArray)
        {
            return Name(type.GetElementType()!) + "[]";
        }
        if (type.IsGenericType)
        {
            string name = type.Name[..type.Name.IndexOf('`')];
            return $"{name}<{string.Join(", ", type.GetGenericArguments().Select(Name))}>";
        }
        return type.DeclaringType is { } outer && !type.IsGenericParameter ? $"{Name(outer)}.{type.Name}" : type.Name;
    }
}
