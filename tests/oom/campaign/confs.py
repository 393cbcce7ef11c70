"""confs.py - PYTORCH_CUDA_ALLOC_CONF values as the campaign handles them: parsed into (key, value) pairs in
order, a setting merged in (it replaces the same key), one removed, written back. "" or None is unset."""
import re


def parse(conf):
    pairs = []
    for part in (conf or "").split(","):
        part = part.strip()
        if not part:
            continue
        key, _, value = part.partition(":")
        pairs.append((key.strip(), value.strip()))
    return pairs


def text(pairs):
    return ",".join("%s:%s" % kv for kv in pairs)


def merge(conf, setting):
    """conf with SETTING ("key:value") added, replacing that key's value where conf sets it."""
    key, _, value = setting.partition(":")
    pairs = parse(conf)
    out = [(k, value if k == key else v) for k, v in pairs]
    if key not in [k for k, _ in pairs]:
        out.append((key, value))
    return text(out)


def without(conf, key):
    return text([(k, v) for k, v in parse(conf) if k != key])


def settings_in(action):
    """The settings an action's text names: "PYTORCH_CUDA_ALLOC_CONF=a:b,c:d" -> ["a:b", "c:d"]."""
    m = re.search(r"PYTORCH_CUDA_ALLOC_CONF=(\S+)", action or "")
    if not m:
        return []
    return ["%s:%s" % kv for kv in parse(m.group(1).rstrip(".;"))]


def changes(user, conf):
    """What conf changes against the user's: sorted keys set or changed, and "-key" for those removed."""
    u, c = dict(parse(user)), dict(parse(conf))
    out = [k for k in c if u.get(k) != c[k]] + ["-" + k for k in u if k not in c]
    return sorted(out)
