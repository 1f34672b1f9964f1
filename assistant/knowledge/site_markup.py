"""The markup a documentation site's generator reads and a reader of the page never sees, taken out.

Documentation folders are written for a site generator, not for a Markdown parser alone: GitBook's
`{% hint style="info" %}` and `{% code title="feature_store.yaml" %}`, Jekyll's Liquid `{{ site.x }}`
and kramdown's `{: .notice--info}`, Hugo's `{{< alert >}}` and `{{% note %}}`, MkDocs' `!!! note
"Title"` admonitions, Docusaurus' `:::tip` fences, attribute lists after an image
(`![](logo.png){ align="center" }`), a heading or a paragraph (`## Install { #install }`, `[](){ #anchor }`),
Hugging Face's doc-builder directives (`[[autodoc]] Name`) and API links (`[`~PeftModel.save_pretrained`]`,
shown as `save_pretrained`), GitHub's alerts (`> [!WARNING]`, shown as a "Warning" callout), MyST's
directives, roles and targets (```` ```{note} ````, {ref}`the guide <install>`, `(install)=`) and an MDX
page's `import` / `export` lines and `{/* comments */}`.
Parsed as Markdown they become words of the section, and an answer quoted `{% code
title="feature_store.yaml" %}`. Here the tags go, an admonition keeps its title, and what the tags
wrap stays. Lines are kept (a tag line becomes an empty line) so sections still start on the lines the
file has, and fenced code is left as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# one attribute of Python-Markdown's attribute list, as MkDocs sites write after a heading, a paragraph or a
# link: an id (#install), a class (.md-button) or a key and its value (width="120"); a kubectl JSONPath such as
# {.status.url} is none (a class has no dot inside)
ATTRIBUTE = r"""(?:[#.][A-Za-z_][\w-]*|[\w-]+=(?:"[^"\n]*"|'[^'\n]*'|[^\s{}"']+))(?=[ \t}])"""
# one pattern for every inline form; each part is bounded, so a line of unclosed braces is read once
TAG = re.compile(
    r"\{%-?[^%\n]{0,300}?-?%\}"  # Liquid / GitBook / Jinja block tags: {% hint %}, {%- include x -%}
    r"|\{\{[<%][^\n]{0,300}?[>%]\}\}"  # Hugo shortcodes: {{< alert >}}, {{% /note %}}
    r"|\{\{[^{}\n]{0,300}\}\}"  # Liquid output: {{ site.press_release_v3 }}
    r"|\{:[^{}\n]{0,300}\}"  # kramdown attribute lists: {: .notice--info}
    r"|(?<=\))[ \t]?\{[^{}\n]{0,300}=[^{}\n]{0,300}\}"  # attributes after an image or link: ){ align="center" }
    # attribute lists with an id or a class: { #install .wide }, {#disable-top-level-vs}
    rf"|[ \t]?\{{(?=[^{{}}\n]{{0,300}}[#.][A-Za-z_])[ \t]*{ATTRIBUTE}(?:[ \t]+{ATTRIBUTE}){{0,20}}[ \t]*\}}"
    r"|\[\[(?:autodoc|open-in-colab)\]\]"  # Hugging Face doc-builder directives: [[autodoc]] Accelerator
)
# a Hugo site parameter in a command, `{{< param "version" >}}`: the page shows the release there; a fenced
# command keeps it as a placeholder, `<version>`, the way documentation writes a value to fill in
PARAMETER = re.compile(r"\{\{[<%]\s*params?\s+\"?(?P<name>[\w.-]{1,60})\"?\s*[>%]\}\}")
# "!!! note "Title"", "??? tip", ":::warning Careful", ":::": the marker goes, a title stays; MkDocs' content
# tab, `=== "pip"`, keeps its name
ADMONITION = re.compile(r"^(?P<indent>\s*)(?P<marker>!!!|\?\?\?\+?|:{3,}|===\+?(?=\s))\s*(?P<rest>.*)$")
# GitHub's alert, a blockquote opened by `> [!TIP]` (also `NOTE`, `IMPORTANT`, `WARNING`, `CAUTION`): the site
# shows the kind as the callout's title, "Tip", and the quote under it; the marker is no word of the page
ALERT = re.compile(r"^(?P<quote>\s*(?:>\s*)+)\[!(?P<kind>note|tip|important|warning|caution)\](?P<rest>.*)$", re.I)
# Hugging Face doc-builder's link to an API object, [`~peft.PeftModel.save_pretrained`] or [`LoraConfig`]: the
# site shows the name as code, its last part only after a tilde; a real link, [`name`](url) or a reference
# definition's label, [`name`]: url, is not one
API_LINK = re.compile(r"\[`(?P<tilde>~?)(?P<name>[A-Za-z_][\w.]*(?:\(\))?)`\](?![(\[])")
# MyST (Sphinx's Markdown): a directive is a fence whose info is `{name}` and an argument, ```{note} or
# ```{code-block} python; a role is `{name}` before a code span, {ref}`the guide <install>`; a target is a
# line `(install)=`. A callout's body is text under its title, a code directive's body code, and what only
# builds the site (a table of contents, an included file, an autodoc stub) is no text of the page
MYST_DIRECTIVE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<argument>[^`]*)$")
MYST_TITLES = {
    "note": "Note:", "warning": "Warning:", "tip": "Tip:", "important": "Important:", "hint": "Hint:",
    "caution": "Caution:", "attention": "Attention:", "danger": "Danger:", "error": "Error:", "seealso": "See also:",
    "versionadded": "New in version", "versionchanged": "Changed in version", "deprecated": "Deprecated since version",
}  # fmt: skip
MYST_TEXT = {"admonition", "dropdown", "tab-set", "tab-item", "card", "grid", "grid-item", "grid-item-card", "topic"}
MYST_CODE = {"code-block", "code", "sourcecode", "code-cell"}
MYST_HIDDEN = {
    "toctree", "contents", "include", "literalinclude", "image", "figure", "eval-rst", "raw", "autosummary",
    "automodule", "autoclass", "autofunction", "automethod", "autoattribute", "autodata", "autoexception",
}  # fmt: skip
MYST_OPTION = re.compile(r"^\s*:[\w-]+:(?:\s.*)?$")  # `:caption: Install` after a directive's opening line
MYST_ROLE = re.compile(r"\{(?P<role>[a-z][\w:+-]*)\}$")  # right before a code span, outside any
MYST_TARGET = re.compile(r"^\s*\([\w.:-]+\)=\s*$")
# the roles that name code (a class, a function, an option), shown as code; others show their text
CODE_ROLES = re.compile(
    r"^(?:py:|std:)?(?:code|class|func|meth|attr|obj|mod|data|exc|const|kbd|file|samp|command|program|option|envvar"
    r"|literal)$"
)
# a component's opening or closing tag alone on its line: JSX's `<Tip warning={true}>`, `</TabItem>` (a
# capitalised word with lower-case letters, not a placeholder such as `<NUM_GPUS>`), Hugging Face's
# `<hfoption id="EVA">`
COMPONENT_TAG = re.compile(r"^\s*<(?P<closing>/?)(?P<name>[A-Z][a-z]\w*(?:\.\w+)*|hf[a-z]+)(?:\s[^<>]*)?>\s*$")
BODY_INDENT = 4  # what an admonition's, a content tab's or a component's body is indented by
FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")  # a code fence's opening or closing run (the reader's too)
# MkDocs' snippet include, `--8<-- "examples/wf.yaml:12"` (or a bare `--8<--` around a list of files): the site
# shows the file there, which the folder indexed may not hold; the directive is no text of the page
SNIPPET = re.compile(r"^\s*-{2,}8<-{2,}(?:\s+(?P<file>\"[^\"\n]*\"|'[^'\n]*'|\S+))?\s*$")
# the marks of a named part in a file other pages include a part of (`--8<-- "install.inc.md:requirements"`):
# `--8<-- [start:requirements]` and `--8<-- [end:requirements]`, bare or in a comment (`<!-- ... -->`, `# ...`).
# The site never shows the line, in code or not; a leading `;` escapes it (pymdown-extensions' notation)
SNIPPET_PART = re.compile(
    r"^.*?(?<![;-])-+8<-+[ \t]+\[[ \t]*(?P<mark>start|end)[ \t]*:[ \t]*(?P<name>[a-z][-_0-9a-z]*)[ \t]*\]", re.I
)
ATX_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t\r\n]|$)")  # an ATX heading's opening: "## Install"
# MDX (Docusaurus, Hugging Face): the page's own JavaScript imports and exports, and {/* comments */}
MDX_ONLY = re.compile(r"^(?:import|export)\s.*$|\{/\*.*?\*/\}")


def admonition_title(rest: str) -> str:
    """What an admonition line says besides its marker: its quoted title, else its bracketed one (Docusaurus'
    `tip[Expected Output]`), else the words after its type (`note "Before you start"` -> "Before you start";
    `tip Careful` -> "Careful"; `note` -> "")."""
    quoted = re.search(r"[\"“](.+?)[\"”]", rest) or re.match(r"\w+\[(.+)\]\s*$", rest)
    if quoted:
        return quoted.group(1)
    words = rest.split(None, 1)
    return words[1] if len(words) == 2 else ""


def without_site_markup(text: str, mdx: bool = False) -> str:
    """The text with template tags, attribute lists and admonition markers taken out, line for line;
    fenced code blocks are left as they are. An MDX page (`mdx`) also loses its import and export lines
    and its comments; its components are tags the Markdown reader already reads past.

    The body of an admonition or a content tab (MkDocs), indented four spaces under its marker, and of a
    component (`<Tip>`, whose Hugging Face pages indent it so) is taken out of its indentation: Markdown reads
    four indented spaces as code, so an admonition's second paragraph was quoted as a code block, and its
    fenced commands as a block showing their fences."""
    out = []
    fence = ""
    bodies: list[Body] = []  # the open bodies, innermost last
    listing = False  # inside a bare `--8<--` ... `--8<--` list of files to include
    directives: list[str] = []  # the fences of the MyST callouts open (their bodies are text), innermost last
    hidden = ""  # the fence of a MyST directive that only builds the site, while it is open
    options = options_in_code = False  # right after a MyST directive's opening line, where its options go
    headed = False  # a heading of the page's own came before, outside code and outside any named part
    in_part = False  # between a part's start and end marks
    for line in text.split("\n"):
        if part := SNIPPET_PART.match(line):
            in_part = part.group("mark").lower() == "start"
            out.append(part_heading(part) if not (fence or hidden or headed) else "")
            continue
        if line.strip():
            # an admonition's body ends at a line indented less than it; a component's body is indented only if
            # its first line is (KServe's `<TabItem>` holds YAML at the margin, whose indentation is its own)
            while bodies and not bodies[-1].component and indentation(line) < bodies[-1].shift:
                bodies.pop()
            if bodies and bodies[-1].shift < 0:
                outer = bodies[-2].shift if len(bodies) > 1 else 0
                bodies[-1].shift = outer + BODY_INDENT * (indentation(line) >= outer + BODY_INDENT)
        line = dedented(line, max(bodies[-1].shift, 0) if bodies else 0)
        opening = FENCE.match(line)
        snippet = SNIPPET.match(line)
        if snippet and not snippet.group("file"):  # a bare marker opens and closes a list of files, a path a line
            listing = not listing
        elif listing and not line.strip():  # the list is one paragraph: an unclosed marker hides no more
            listing = False
        if listing or snippet:
            out.append("")
            continue
        if hidden:  # a directive that only builds the site, up to its closing fence
            if opening and closes(opening.group(1), hidden, line):
                hidden = ""
            out.append("")
            continue
        if (options and not fence and (MYST_OPTION.match(line) or not line.strip())) or (
            options_in_code and fence and MYST_OPTION.match(line)
        ):
            out.insert(len(out) - 1, "")  # a directive's option (`:caption: Install`) goes; its opening line moves
            continue  # down to the body, which it introduces ("Warning:" and the first sentence)
        options = options_in_code = False
        if fence:  # any run as long closes it, as it always did here ("``` -->" ends a block a comment wraps)
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            out.append(PARAMETER.sub(r"<\g<name>>", line))
            continue
        if opening and directives and closes(opening.group(1), directives[-1], line):
            directives.pop()  # a callout's closing fence
            out.append("")
            continue
        directive = MYST_DIRECTIVE.match(line) if opening else None
        if directive and (name := directive.group("name").lower()) in MYST_HIDDEN:
            hidden = directive.group("fence")
            out.append("")
            continue
        if directive and name in MYST_CODE:
            fence, options_in_code = directive.group("fence"), True
            out.append(f"{fence}{directive.group('argument').split(' ', 1)[0]}")
            continue
        if directive and (name in MYST_TITLES or name in MYST_TEXT):
            directives.append(directive.group("fence"))
            out.append(myst_title(name, directive.group("argument").strip()))
            options = True
            continue
        if opening:
            fence = opening.group(1)
            out.append(line)
            continue
        headed = headed or (not in_part and bool(ATX_HEADING.match(line)))
        if MYST_TARGET.match(line):
            out.append("")
            continue
        shift = max(bodies[-1].shift, 0) if bodies else 0
        component = COMPONENT_TAG.match(line)
        if component and component.group("closing"):
            while bodies and bodies[-1].component and bodies.pop().component != component.group("name"):
                pass
        elif component:
            bodies.append(Body(-1, component.group("name")))  # its shift is read off its first line
        admonition = ADMONITION.match(line)
        if admonition:
            myst = re.match(r"\{([\w:-]+)\}\s*(.*)", admonition.group("rest"))  # MyST's colon fence, :::{note}
            title = myst_title(myst.group(1).lower(), myst.group(2).strip()) if myst else ""
            out.append(admonition.group("indent") + (title or admonition_title(admonition.group("rest"))))
            if not admonition.group("marker").startswith(":"):  # Docusaurus' `:::` closes its own body
                bodies.append(Body(shift + len(admonition.group("indent")) + BODY_INDENT))
            continue
        if alert := ALERT.match(line):
            rest = alert.group("rest").strip()
            line = f"{alert.group('quote')}{alert.group('kind').capitalize()}:{' ' if rest else ''}{rest}"
        line = with_roles_shown(API_LINK.sub(api_name, line))
        line = outside_code_spans(line, lambda words: TAG.sub("", words))
        out.append(MDX_ONLY.sub("", line) if mdx else line)
    return "\n".join(out)


def part_heading(part: re.Match[str]) -> str:
    """What a part's mark shows in a file of named parts, one that has no heading of its own before it (an
    `install.inc.md` whose parts other pages include under their own headings): the part's start, named as a
    heading, `## Set up using python`, so its text is a section of that name and not one run of the file's
    parts; an end mark is an empty line. Where the page has headings of its own outside its parts, a mark is
    an empty line: the part is text of the section it sits in."""
    if part.group("mark").lower() != "start":
        return ""
    words = re.sub(r"[-_]+", " ", part.group("name")).strip()
    return f"## {words[:1].upper()}{words[1:]}"


def closes(run: str, fence: str, line: str) -> bool:
    """Does `line`, a fence of `run`, close the MyST directive `fence` opened: the same character, as long or
    longer, and nothing after it (a callout's ```python opens a code block inside it)?"""
    return run[0] == fence[0] and len(run) >= len(fence) and not line.strip()[len(run) :].strip()


def myst_title(name: str, argument: str) -> str:
    """What a MyST callout shows above its body: "Note:", "New in version 0.4", or its own title."""
    title = MYST_TITLES.get(name, "")
    if name.startswith("version") or name == "deprecated":
        return f"{title} {argument}:" if argument else f"{title}:"
    if title:
        return f"{title} {argument}".strip()
    return f"{argument}:" if argument and argument[-1].isalnum() else argument


def with_roles_shown(line: str) -> str:
    """The line with each MyST role, a `{name}` outside code spans right before one, shown as its site shows it
    (`role_text`); a `{appId}` inside a span (`/ws/v1/{appId}`) is the span's."""
    out, start = [], 0
    for span in CODE_SPAN.finditer(line):
        before, ticks = line[start : span.start()], len(span.group(1))
        role = MYST_ROLE.search(before)
        shown = role_text(role.group("role"), span.group()[ticks:-ticks]) if role else span.group()
        out += [before[: role.start()] if role else before, shown]
        start = span.end()
    return "".join([*out, line[start:]])


def role_text(role: str, content: str) -> str:
    """A MyST role as its site shows it: {ref}`the guide <install>` is "the guide", {class}`~vllm.LLM` the code
    `LLM`, {doc}`install` "install"."""
    content = content.strip()
    shown = re.sub(r"\s*<[^<>]*>$", "", content) or content  # "text <target>": the text
    if CODE_ROLES.match(role):
        shown = shown.rsplit(".", 1)[-1] if shown.startswith("~") else shown
        return f"`{shown.lstrip('~')}`"
    return shown.lstrip("~")


def api_name(link: re.Match[str]) -> str:
    """A doc-builder API link as the site shows it: `` `save_pretrained` `` for [`~peft.PeftModel.save_pretrained`]."""
    if not link.string[: link.start()].strip() and link.string[link.end() : link.end() + 1] == ":":
        return link.group()  # a reference definition: [`name`]: url
    name = link.group("name")
    return f"`{name.rsplit('.', 1)[-1] if link.group('tilde') else name}`"


@dataclass
class Body:
    """An admonition's, a content tab's or a component's body: the columns of indentation its lines lose (-1
    for a component until its first line is read), and the component's name ("" for an admonition or a tab)."""

    shift: int
    component: str = ""


def indentation(line: str) -> int:
    """The columns of the line's leading blanks, a tab reaching the next multiple of four."""
    return len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs(BODY_INDENT))


def dedented(line: str, shift: int) -> str:
    """The line without as many of its leading blanks as fill at most `shift` columns."""
    taken = 0
    while taken < len(line) and line[taken] in " \t" and len(line[: taken + 1].expandtabs(BODY_INDENT)) <= shift:
        taken += 1
    return line[taken:]


# an inline code span: a run of backticks, then anything up to a run of the same length
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)")


def outside_code_spans(line: str, change: Callable[[str], str]) -> str:
    """The line with `change` applied to its words outside inline code spans: a span shows syntax as written
    (Argo's `{{ tasks.log-int.outputs.result }}`, a Jinja `{% if %}` in a how-to), which is what an answer
    quotes; taken out, it also left an empty span whose backticks swallowed the rest of the line."""
    out, start = [], 0
    for span in CODE_SPAN.finditer(line):
        out += [change(line[start : span.start()]), span.group()]
        start = span.end()
    return "".join([*out, change(line[start:])])
