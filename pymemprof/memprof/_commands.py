# _commands.py - memprof's analyses as Python methods, made from the session's command table
# (mp_session_command_spec, mp_session_command_help): each option of a command becomes a keyword argument and the
# command's help its docstring, so that nothing here repeats what the C table declares. The rules:
#   --name-of-it VALUE   name_of_it=VALUE (a device: an int or "all"; a size: an int or "64MiB")
#   --flag               flag=True
#   --no-thing           thing=True by default; thing=False passes --no-thing
#   --sites [N]          sites=True, or sites=N
#   -o FILE              output=FILE (without it a JSON result comes back as data)
#   --format             "json" by default where json is one of its choices: the result is then parsed
import inspect
import json

from . import _library

_LETTERS = {"-o": "output"}  # options spelled with one letter, by the keyword that reads
_PRINTED = {"segsum", "trace"}  # _memory_viz's functions return, without print's newline, what the CLI prints


class Keyword:
    """How one option of a command is given in Python."""

    def __init__(self, option):
        self.option = option
        self.negated = option.name.startswith("--no-") and option.kind == "flag"
        bare = option.name[len("--no-"):] if self.negated else option.name.lstrip("-")
        self.name = _LETTERS.get(option.name, bare.replace("-", "_"))
        if self.negated:
            self.default = True
        elif option.name == "--format" and "json" in option.words:
            self.default = "json"
        else:
            self.default = None

    def words(self, value):
        """The command's words for VALUE."""
        o = self.option
        if self.negated:
            return [] if value is None or value else [o.name]
        if value is None or value is False:
            return []
        if value is True and o.kind in ("flag", "flag-count"):
            return [o.name]
        if o.kind == "flag":
            raise TypeError("memprof: %s= takes True or False" % self.name)
        return [o.name, str(value)]

    def describe(self):
        o = self.option
        what = {"flag": "True/False", "flag-count": "True or a count", "choice": " | ".join(o.words),
                "device": "a device number or 'all'", "count": "a count", "integer": "an integer",
                "size": "bytes, or a size such as '64MiB'", "file": "a file name", "text": "text"}.get(o.kind, o.kind)
        return "%s=%r: %s (%s)" % (self.name, self.default, o.name, what)


def method_for(command):
    """Target's method for COMMAND (a _library.Command whose one word is an optional snapshot)."""
    keywords = [Keyword(o) for o in command.options]
    by_name = {k.name: k for k in keywords}
    output = by_name.get("output")
    fmt = by_name.get("format")

    def run(self, **kwargs):
        unknown = sorted(set(kwargs) - set(by_name))
        if unknown:
            raise TypeError("memprof: %s() got an unexpected keyword argument '%s'" % (command.name, unknown[0]))
        values = {k.name: kwargs.get(k.name, k.default) for k in keywords}
        words = [w for k in keywords for w in k.words(values[k.name])]
        as_json = fmt is not None and values["format"] == "json"
        if as_json and output is not None and values["output"] is None:
            words += ["-o", "-"]  # a format written to a file only unless it is standard output
        text = self._text(command.name, *self._at(), *words)
        if as_json and (output is None or values["output"] is None):
            return json.loads(text)
        if command.name in _PRINTED:
            return text[:-1] if text.endswith("\n") else text
        return text

    run.__name__ = run.__qualname__ = command.name
    run.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)] +
        [inspect.Parameter(k.name, inspect.Parameter.KEYWORD_ONLY, default=k.default) for k in keywords])
    run.__doc__ = command.help + ("\nIn Python, keyword arguments:\n" + "\n".join(
        "  " + k.describe() for k in keywords) + "\n" if keywords else "") + \
        ("A JSON format comes back parsed (dicts and lists); text comes back as str.\n" if fmt else "")
    return run


def analyses(lib):
    """The commands that become Target's methods: those whose one word is an optional snapshot."""
    return [c for c in _library.commands(lib) if c.positional == "[snapshot]" and " " not in c.name
            and not c.flags & _library.PREFIX]
