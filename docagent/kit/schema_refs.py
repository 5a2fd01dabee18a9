"""A class schema's ``$ref``s, resolved once, at validate and publish, within the definition's folder only.

A ``$ref`` may point into the schema itself (``#/$defs/money``) or at another JSON file of the definition's
folder (``common.schema.json#/$defs/money``, relative to the schema that names it). Nothing else: no
network (``http://``, ``https://``), no ``file:`` URL, no absolute path, no ``..`` out of the folder, no
symlink out of it. The references are checked with `referencing` (the registry jsonschema itself uses),
whose retriever refuses everything: the folder's files are added by this module, nothing is fetched, ever.

The published schema is self-contained: each other file a schema refers to is copied under the schema's own
``$defs`` (named ``file_PATH``) and its references rewritten to point there, so the running functions resolve
nothing but ``#/...`` (functions/definition/job_spec.py refuses any other ``$ref`` in a bundle).
docs/security.md.
"""

from __future__ import annotations

import copy
import re
import urllib.parse
from pathlib import Path, PurePosixPath
from typing import Any

from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

from docagent.kit.files import NotARegularFile, TooDeep, read_json_file
from functions.definition.job_spec import keyword_values
from functions.definition.schema_cycles import reference_cycle

# The base URI every file of the definition gets: file:///definition/<path in the folder>. A reference is
# resolved against it with the URL rules (urljoin), so ``../x`` and ``/x`` land outside ``/definition/``.
_BASE = "file:///definition/"
_DEFS_PREFIX = "file_"
MAX_REFERENCED_FILES = 50


class ReferenceRefused(ValueError):  # noqa: N818 (the reference is refused: the name reads as the outcome)
    """A ``$ref`` that does not resolve inside the definition's folder: the file, the JSON path of the
    ``$ref``, why, and the fix (a ``Problem`` of ``definition validate``)."""

    def __init__(self, message: str, file: str = "", where: str = "$", fix: str = "") -> None:
        super().__init__(f"{file}: {where}: {message} (fix: {fix})" if file else message)
        self.file, self.where, self.message, self.fix = file, where, message, fix
        self.others: list[ReferenceRefused] = []  # the schema's other refused references, after this one

    @property
    def every(self) -> list[ReferenceRefused]:
        """This refusal and the others of the same schema, in the order they were found."""
        return [self, *self.others]


def _uri(relative: str) -> str:
    return _BASE + urllib.parse.quote(PurePosixPath(relative).as_posix())


def _relative(uri: str) -> str | None:
    """The folder-relative path a file URI names, or None when it is not a file of the folder."""
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme != "file" or parts.netloc or not parts.path.startswith("/definition/"):
        return None
    path = PurePosixPath(urllib.parse.unquote(parts.path.removeprefix("/definition/")))
    if not path.parts or ".." in path.parts:
        return None
    return path.as_posix()


class _FolderFiles:
    """The retriever: a JSON file of the folder by its URI, never anything else."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.read: list[str] = []

    def __call__(self, uri: str) -> Resource[Any]:
        relative = _relative(uri)
        if relative is None:
            raise ReferenceRefused(f"{uri} is outside the definition's folder (no network, no other file)")
        path = (self.root / relative).resolve()
        if not path.is_relative_to(self.root):
            raise ReferenceRefused(f"{relative} leads outside the definition's folder (a symlink?)")
        if len(self.read) >= MAX_REFERENCED_FILES:
            raise ReferenceRefused(f"more than {MAX_REFERENCED_FILES} files referred to")
        try:
            contents = read_json_file(path)
        except FileNotFoundError:
            raise ReferenceRefused(f"{relative}: no such file in the definition's folder") from None
        except (NotARegularFile, TooDeep) as error:
            raise ReferenceRefused(f"{relative}: {error}") from None
        except (OSError, ValueError) as error:
            raise ReferenceRefused(f"{relative}: not a JSON file ({error})") from None
        self.read.append(relative)
        return Resource.from_contents(contents, default_specification=DRAFT202012)


def _refs(document: Any) -> list[tuple[str, str]]:
    """(JSON path, value) of every string ``$ref`` in a schema document (functions/definition/job_spec.py's
    walk)."""
    return [(where, ref) for where, ref in keyword_values(document, "$ref") if isinstance(ref, str)]


def _fix(ref: str) -> str:
    if urllib.parse.urlsplit(ref).scheme in {"http", "https", "ftp"}:
        return "copy the schema it names into the definition's folder and refer to it by its relative path"
    return "refer to '#/$defs/NAME' or to a JSON file of the definition's folder by its relative path"


def _refuse(uri: str) -> Resource[Any]:
    """The registry's retriever: every file is added by ``bundle`` itself, so anything asked for here is not a
    file of the folder (a ``$id`` pointing elsewhere, say): refused, never fetched."""
    raise ReferenceRefused(f"{uri} is outside the definition's folder (no network, no other file)")


def bundle(root: Path, relative: str, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (the file ``relative`` of the folder ``root``) with every reference to another file of the
    folder copied under its ``$defs``; ReferenceRefused naming the file, the JSON path and the fix."""
    files = _FolderFiles(root)
    registry: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]
    registry = registry.with_resource(_uri(relative), DRAFT202012.create_resource(schema))
    result = copy.deepcopy(schema)
    copied: dict[str, Any] = {}
    names: dict[str, str] = {}  # file -> its name under $defs
    pending = [(relative, result)]
    refused_refs: list[ReferenceRefused] = []
    while pending:
        file, document = pending.pop()
        for where, ref in _refs(document):
            try:
                target_file, registry = _checked(registry, files, file, where, ref)
            except ReferenceRefused as refused:
                refused_refs.append(refused)  # every refused reference is named, not only the first
                continue
            if target_file == relative:
                _set_ref(document, where, _local(ref, "#"))
                continue
            name = names.setdefault(target_file, _def_name(target_file, set(names.values())))
            if name not in copied:
                copied[name] = copy.deepcopy(registry.contents(_uri(target_file)))
                pending.append((target_file, copied[name]))
            _set_ref(document, where, _local(ref, f"#/$defs/{name}"))
    if refused_refs:
        first = refused_refs[0]
        first.others = refused_refs[1:]
        raise first
    if copied:
        result.setdefault("$defs", {}).update(copied)
    _refuse_cycle(result, relative, {name: file for file, name in names.items()})
    return result


def _refuse_cycle(bundled: dict[str, Any], relative: str, files: dict[str, str]) -> None:
    """ReferenceRefused naming the file and the place of a ``$ref`` that leads back to itself (in the
    schema, or in another file copied under its ``$defs``: ``files`` maps those names to the files)."""
    cycle = reference_cycle(bundled)
    if cycle is None:
        return
    where, file = cycle[0], relative
    for name, other in files.items():
        prefix = f"$.$defs.{name}"
        if where.startswith(prefix + ".") or where.startswith(prefix + "["):
            where, file = "$" + where.removeprefix(prefix), other
    raise ReferenceRefused(
        "this $ref leads back to itself through the schemas it names (a reference cycle): validating a "
        "value against it would never end",
        file,
        where,
        "write the nested fields out instead of referring back (docs/defining-a-job.md)",
    )


def _checked(
    registry: Registry[Any], files: _FolderFiles, file: str, where: str, ref: str
) -> tuple[str, Registry[Any]]:
    """The folder file ``ref`` (written in ``file`` at ``where``) reaches, and the registry holding it, once
    the reference resolves; ReferenceRefused naming the place otherwise."""
    target_file = _relative(urllib.parse.urldefrag(urllib.parse.urljoin(_uri(file), ref)).url)
    try:
        if target_file is None:
            raise ReferenceRefused(f"{ref} is outside the definition's folder")
        if _uri(target_file) not in registry:
            registry = registry.with_resource(_uri(target_file), files(_uri(target_file)))
        registry.resolver(base_uri=_uri(file)).lookup(ref)
    except ReferenceRefused as refused:
        raise ReferenceRefused(f"$ref {ref!r}: {refused}", file, f"{where}.$ref", _fix(ref)) from None
    except (Unresolvable, NoSuchResource):
        fragment = urllib.parse.urldefrag(ref).fragment
        raise ReferenceRefused(
            f"$ref {ref!r} does not resolve: nothing at #{fragment} in {target_file}",
            file,
            f"{where}.$ref",
            "point it at an existing definition, e.g. '#/$defs/NAME'",
        ) from None
    return target_file, registry


def _def_name(file: str, taken: set[str]) -> str:
    """A copied file's name under ``$defs``: ``file_classes_common.json`` (letters, digits, ``._-`` only, so
    that a JSON pointer to it needs no escape), made unique."""
    name = _DEFS_PREFIX + re.sub(r"[^A-Za-z0-9._-]", "_", file)
    unique, number = name, 1
    while unique in taken:
        number += 1
        unique = f"{name}_{number}"
    return unique


def _local(ref: str, base: str) -> str:
    """A reference's fragment, rebased: ``x.json#/$defs/a`` -> ``#/$defs/file:x.json/$defs/a``."""
    fragment = urllib.parse.urldefrag(ref).fragment
    if not fragment:
        return base
    if base == "#":
        return "#" + fragment
    return base + fragment


def _set_ref(document: Any, where: str, value: str) -> None:
    """Rewrite the ``$ref`` at ``where`` (a path _refs gave) in place."""
    node = _at(document, where)
    node["$ref"] = value


def _at(document: Any, where: str) -> Any:
    node = document
    for step in _steps(where):
        node = node[step]
    return node


def _steps(where: str) -> list[str | int]:
    steps: list[str | int] = []
    for part in where.removeprefix("$").replace("[", ".[").split("."):
        if not part:
            continue
        steps.append(int(part[1:-1]) if part.startswith("[") else part)
    return steps
