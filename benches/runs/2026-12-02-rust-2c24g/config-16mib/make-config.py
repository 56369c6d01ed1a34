# Writes the 16 MiB config timed here: half named memtable configurations,
# half a single `inherits` chain of allocators, then two variants of one
# name (refused only once the whole config is checked).
parts = ["[workload]\nops = 100\n\n"]
size = len(parts[0])
i = 0
while size < 8 * (1 << 20):
    t = f"[memtable.m{i}]\nplugin = \"btree\"\n\n"; parts.append(t); size += len(t); i += 1
parts.append("[allocator.a0]\nplugin = \"per-row\"\n\n")
j = 1
while size < 16 * (1 << 20) - 2000:
    t = f"[allocator.a{j}]\ninherits = \"a{j-1}\"\n\n"; parts.append(t); size += len(t); j += 1
parts.append(f"[[variant]]\nname = \"v\"\nmemtable = \"m{i-1}\"\nallocator = \"a{j-1}\"\nserializer = \"lean\"\n\n" * 2)
open("/tmp/big16.toml", "w").write("".join(parts))
print(f"{i} named memtables, an inherits chain of {j} allocators, {sum(map(len, parts))} bytes")
