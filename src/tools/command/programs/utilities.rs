//! Small read-only utilities of the base system and its common packages, each of which
//! prints what it reads or computes and writes nothing: text filters (`col`, `ul`), name
//! checkers (`pathchk`, `getopt`), what a build or a system is configured with
//! (`pg_config`, `dpkg-buildflags`, `dpkg-vendor`, `dpkg-parsechangelog`, `systemd-path`),
//! facts about files (`mountpoint`, `filefrag`, `fincore`, `lzmainfo`, `zipdetails`,
//! `tarcat`), fonts (fontconfig's `fc-*` readers; `fc-cache` writes caches and is not
//! here), terminal descriptions (`toe`, `captoinfo`, `infotocap`; `tic` compiles into a
//! database and is not here), message catalogues and error texts (`gettext`, `ngettext`,
//! `perror`, gettext's `msg*` readers, whose `-o` writes), encodings (`encguess`,
//! `piconv`), `mcookie`, `hmac256`, `podchecker`, `obj2yaml` (not `-o`).

use super::table::{Effect, OUTPUT_FILE, Operands, Refusal, TABLE, Table};
use super::{Program, Rule};
use crate::tools::command::options::Spec;

/// gettext's `-o`/`--output-file`: the catalogue is written to a file, replacing it.
const CATALOGUE_OUTPUT: Refusal = Refusal {
    options: &["o", "output-file"],
    effect: Effect::Writes,
    what: "writes the catalogue to a file, replacing it",
};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        // Filters of their input: `col` takes reverse line feeds and backspaces out, `ul`
        // turns underlining into the terminal's (`-t` names the terminal type).
        &["col"],
        Rule::Table(&Table {
            spec: Spec::values("l", &["lines"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["ul"],
        Rule::Table(&Table {
            spec: Spec::values("t", &["terminal"]),
            ..TABLE
        }),
    ),
    Program::new(
        // Words checked or parsed, never opened: whether names are valid paths, and a
        // script's options parsed as getopt(3) would (`-o`/`-l` the option strings, `-n` the
        // name errors are reported under, `-s` the shell to quote for).
        &["pathchk"],
        Rule::Table(&Table {
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["getopt"],
        Rule::Table(&Table {
            spec: Spec::values("olns", &["options", "longoptions", "name", "shell"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // What a program was built with, or a distribution is: paths and flags printed
        // (`dpkg-vendor` reads `/etc/dpkg/origins`, which the walls show every line).
        &["pg_config", "systemd-path"],
        Rule::Table(&Table {
            spec: Spec::values("", &["suffix"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["dpkg-buildflags"],
        Rule::Table(&Table {
            spec: Spec::values("", &["get", "origin", "query-features", "export"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["dpkg-vendor"],
        Rule::Table(&Table {
            spec: Spec::values("", &["vendor", "query", "is", "derives-from"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // A package's changelog (`debian/changelog`, or `-l`'s), parsed and printed. `-L`
        // names a directory of parser modules, which it would load as Perl code.
        &["dpkg-parsechangelog"],
        Rule::Table(&Table {
            spec: Spec::values(
                "lLFSvocstf",
                &[
                    "file",
                    "format",
                    "show-field",
                    "offset",
                    "count",
                    "since",
                    "until",
                    "from",
                    "to",
                    "label",
                ],
            ),
            operands: Operands::Text,
            path_options: &["l", "file"],
            refused: &[Refusal {
                options: &["L"],
                effect: Effect::Unsafe,
                what: "loads changelog parsers from a directory, as Perl code",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // Facts about files: whether a directory is a mount point, how a file lies on the
        // disk (`filefrag`, whose `-s` only syncs it first) and how much of it is in the
        // page cache, an `.lzma` file's header, a zip file's records, tar volumes joined
        // to the output.
        &["mountpoint"],
        Rule::Table(&TABLE),
    ),
    Program::new(
        &["filefrag"],
        Rule::Table(&Table {
            spec: Spec::NONE.optional("b"),
            ..TABLE
        }),
    ),
    Program::new(
        &["fincore"],
        Rule::Table(&Table {
            spec: Spec::values("o", &["output"]),
            ..TABLE
        }),
    ),
    Program::new(&["lzmainfo", "zipdetails", "tarcat"], Rule::Table(&TABLE)),
    Program::new(
        // Fonts: a pattern parsed (`fc-pattern`), the faces of font files (`fc-query`,
        // `fc-scan`), a language's coverage checked (`fc-validate`), the configuration
        // files listed, a cache's contents (`fc-cat`).
        &["fc-pattern"],
        Rule::Table(&Table {
            spec: Spec::values("f", &["format"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &[
            "fc-query",
            "fc-scan",
            "fc-validate",
            "fc-conflist",
            "fc-cat",
        ],
        Rule::Table(&Table {
            spec: Spec::values("ifl", &["index", "format", "lang"]),
            ..TABLE
        }),
    ),
    Program::new(
        // Terminal descriptions: the entries of the terminfo database (`-u`/`-U` read a
        // source file), and a description translated between its two formats, printed.
        &["toe"],
        Rule::Table(&Table {
            spec: Spec::values("uUv", &[]),
            path_options: &["u", "U"],
            ..TABLE
        }),
    ),
    Program::new(
        &["captoinfo", "infotocap"],
        Rule::Table(&Table {
            spec: Spec::values("vw", &[]),
            ..TABLE
        }),
    ),
    Program::new(
        // Messages: one translated (`-d` the domain, `-c` the context), an error number's
        // text.
        &["gettext", "ngettext"],
        Rule::Table(&Table {
            spec: Spec::values("dc", &["domain", "context"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["perror"],
        Rule::Table(&Table {
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // gettext's catalogue readers: joined, searched, filtered by attribute, made
        // unique, given English translations, converted, compared, decompiled, each to the
        // output (`-o` writes a file; `-f` names a file of input file names; `-D` a
        // directory to find them in). `msgfilter` and `msgexec` run programs and are not
        // here; `msgmerge` and `msgfmt` write.
        &[
            "msgcat",
            "msggrep",
            "msgattrib",
            "msguniq",
            "msgen",
            "msgconv",
            "msgcomm",
            "msgcmp",
            "msgunfmt",
        ],
        Rule::Table(&Table {
            spec: Spec::values(
                "ofDtpwdlrKTJCXeNMEF",
                &[
                    "output-file",
                    "files-from",
                    "directory",
                    "to-code",
                    "width",
                    "more-than",
                    "less-than",
                    "domain",
                    "locale",
                    "resource",
                    "regexp",
                    "file",
                    "msgctxt",
                    "msgid",
                    "msgstr",
                    "comment",
                    "extracted-comment",
                    "location",
                    "only-file",
                    "ignore-file",
                    "color",
                    "style",
                ],
            ),
            path_options: &["D", "directory", "only-file", "ignore-file"],
            names_from: &["f", "files-from"],
            refused: &[CATALOGUE_OUTPUT],
            ..TABLE
        }),
    ),
    Program::new(
        // A file's encoding guessed among the suspects `-s` names; a file or `-s`'s
        // string converted between encodings, to the output.
        &["encguess"],
        Rule::Table(&Table {
            spec: Spec::values("s", &["suspect"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["piconv"],
        Rule::Table(&Table {
            spec: Spec::values("ftsC", &["from", "to", "string", "check"]),
            ..TABLE
        }),
    ),
    Program::new(
        // A random cookie, `-f` naming files to mix in; a message authentication code of
        // files under a key given as a word.
        &["mcookie"],
        Rule::Table(&Table {
            spec: Spec::values("fm", &["file", "max-size"]),
            path_options: &["f", "file"],
            ..TABLE
        }),
    ),
    Program::new(
        &["hmac256"],
        Rule::Table(&Table {
            operands: Operands::PatternThenPaths(&["stdkey"]),
            ..TABLE
        }),
    ),
    Program::new(
        // POD checked for errors, and an object file described as YAML.
        &["podchecker"],
        Rule::Table(&TABLE),
    ),
    Program::new(
        &["obj2yaml"],
        Rule::Table(&Table {
            spec: Spec::values("o", &["output"]),
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
];

#[cfg(test)]
mod tests {
    use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe};
    use crate::tools::command::tests::check_in_workspace;

    #[test]
    fn utilities_print_and_their_writing_options_are_refused() {
        check_in_workspace(&[
            ("col -b < notes.txt", Safe),
            ("ul -t dumb notes.txt", Safe),
            ("pathchk -p src/main.rs 'a b'", Safe),
            ("getopt -o ab: -l all,base: -- -a -b x y", Safe),
            ("pg_config --bindir", Safe),
            ("systemd-path user-config", Safe),
            ("dpkg-buildflags --get CFLAGS", Safe),
            ("dpkg-vendor --query Vendor", Safe),
            ("dpkg-parsechangelog -l notes.txt -S Version", Safe),
            ("dpkg-parsechangelog -L parsers", NotSafe),
            ("dpkg-parsechangelog -l /etc/shadow", NotSafe),
            ("mountpoint -q src", Safe),
            ("mountpoint /", NotSafe),
            ("filefrag -v notes.txt", Safe),
            ("fincore notes.txt", Safe),
            ("lzmainfo notes.txt", Safe),
            ("zipdetails -v notes.txt", Safe),
            ("fc-pattern -f '%{family}' serif", Safe),
            ("fc-query -f '%{family}' notes.txt", Safe),
            ("fc-validate -l en notes.txt", Safe),
            ("toe -a", Safe),
            ("captoinfo notes.txt", Safe),
            ("gettext -d coreutils 'Usage: '", Safe),
            ("ngettext file files 2", Safe),
            ("perror 13 28", Safe),
            ("msgcat notes.txt README.md", Safe),
            ("msggrep -K -e hello notes.txt", Safe),
            ("msgunfmt notes.txt", Safe),
            ("msgcat -o out.po notes.txt", Destructive),
            ("msguniq --output-file=out.po notes.txt", Destructive),
            ("msgcat -f -", NotSafe),
            ("msgcat ../x.po", NotSafe),
            ("encguess -s latin1 notes.txt", Safe),
            ("piconv -f latin1 -t utf8 notes.txt", Safe),
            ("mcookie -f notes.txt", Safe),
            ("mcookie -f ~/.ssh/id_rsa", NotSafe),
            ("hmac256 key notes.txt", Safe),
            ("hmac256 key /etc/shadow", NotSafe),
            ("podchecker README.md", Safe),
            ("obj2yaml notes.txt", Safe),
            ("obj2yaml -o out.yaml notes.txt", Destructive),
            ("fc-cache -f", NotSafe),
            ("tic notes.txt", NotSafe),
            ("msgfilter -i x.po sed s/a/b/", NotSafe),
            ("msgexec -i x.po cat", NotSafe),
            // Other names of programs known elsewhere: the binutils readers of cross and
            // LLVM toolchains (not their writers), `dir`, `rgrep`, and `pmap`/`pwdx`.
            ("x86_64-linux-gnu-nm -D notes.txt", Safe),
            ("llvm-objdump-14 -d notes.txt", Safe),
            ("llvm-readobj --file-headers notes.txt", Safe),
            ("x86_64-linux-gnu-strip notes.txt", NotSafe),
            ("llvm-objcopy notes.txt out", NotSafe),
            ("llvm-nm @args", NotSafe),
            ("not-a-triplet-at-all-nm notes.txt", NotSafe),
            ("dir -l src", Safe),
            ("rgrep x src", Safe),
            ("rgrep x /etc", NotSafe),
            ("pmap -x 1", Safe),
            ("pmap -N rc 1", Destructive),
            // dnf and yum (in `queries.rs`): their queries, not their changes.
            ("dnf list installed", Safe),
            ("yum -q info --installed bash", Safe),
            ("dnf repoquery --installed --requires bash", Safe),
            ("dnf -C search htop", Safe),
            ("yum search htop", NotSafe),
            ("yum info htop", NotSafe),
            ("dnf repolist", NotSafe),
            ("dnf provides ./app", NotSafe),
            ("dnf history", Safe),
            ("dnf history info 4", Safe),
            ("dnf history undo 4", NotSafe),
            ("dnf install htop", NotSafe),
            ("dnf remove htop", Destructive),
            ("dnf --setopt=plugins=1 list", NotSafe),
            ("dnf --installroot=/mnt list", NotSafe),
        ]);
    }
}
