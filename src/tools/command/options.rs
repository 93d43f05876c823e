//! Command-line options the way getopt reads them: combined short flags (`-fdx`), attached
//! values (`-n5`, `--lines=5`), separate values (`-n 5`), `--` ending the options, and
//! options mixed with operands (GNU permutes) unless the command stops at its first operand
//! (wrappers, whose first operand is the command they run).
//!
//! The tables that say which options take a value must never list an option that does not:
//! the word after it would be skipped and escape the operand checks. Missing one only makes
//! a value look like an operand, which costs a confirmation at worst.

use super::words::Arg;

/// How one command reads its options.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spec {
    /// Short options that take a value, attached or in the next word.
    pub short_values: &'static str,
    /// Short options whose value, if any, is attached (`-i.bak`, `-u[mode]`).
    pub short_optional: &'static str,
    /// Long options (without `--`) that take a value, after `=` or in the next word.
    pub long_values: &'static [&'static str],
    /// Whether an unambiguous prefix of a long option names it (GNU getopt_long, git).
    pub abbreviations: bool,
    /// Whether options end at the first operand (POSIX order; wrappers).
    pub stop_at_operand: bool,
}

impl Spec {
    pub(super) const NONE: Spec = Spec {
        short_values: "",
        short_optional: "",
        long_values: &[],
        abbreviations: true,
        stop_at_operand: false,
    };

    pub(super) const fn values(
        short_values: &'static str,
        long_values: &'static [&'static str],
    ) -> Spec {
        Spec {
            short_values,
            long_values,
            ..Spec::NONE
        }
    }

    pub(super) const fn posix(self) -> Spec {
        Spec {
            stop_at_operand: true,
            ..self
        }
    }

    pub(super) const fn exact(self) -> Spec {
        Spec {
            abbreviations: false,
            ..self
        }
    }

    pub(super) const fn optional(self, short_optional: &'static str) -> Spec {
        Spec {
            short_optional,
            ..self
        }
    }

    fn long_takes_value(&self, name: &str) -> bool {
        self.long_values
            .iter()
            .any(|long| *long == name || (self.abbreviations && long_matches(name, long)))
    }
}

/// The value of an option.
#[derive(Debug, Clone, Copy)]
pub(super) struct Value<'a> {
    /// The value, when known (`None` for a separate word only known at run time, or a
    /// missing one).
    pub text: Option<&'a str>,
}

/// One element of a command line.
#[derive(Debug, Clone, Copy)]
pub(super) enum Item<'a> {
    /// `-x` (one letter of a cluster), with its value if it takes one.
    Short {
        flag: char,
        value: Option<Value<'a>>,
    },
    /// `--name` or `--name=value`; `name` is as written (possibly abbreviated).
    Long {
        name: &'a str,
        value: Option<Value<'a>>,
    },
    /// `--`.
    EndOfOptions,
    /// A word that is not an option.
    Operand(&'a Arg),
    /// A word only known at run time: it may be an option, an operand, or several words.
    Opaque(&'a Arg),
}

impl<'a> Item<'a> {
    /// Whether this is the short option `flag` or the long option `long` (abbreviations
    /// accepted when `abbreviations` is set).
    pub(super) fn is(&self, flag: Option<char>, long: Option<&str>, abbreviations: bool) -> bool {
        match self {
            Item::Short { flag: f, .. } => flag == Some(*f),
            Item::Long { name, .. } => long
                .is_some_and(|long| *name == long || (abbreviations && long_matches(name, long))),
            _ => false,
        }
    }

    /// Whether this option is one of `list`: one-letter entries are short options, longer
    /// ones long options (abbreviations accepted when `abbreviations` is set).
    pub(super) fn named(&self, list: &[&str], abbreviations: bool) -> bool {
        list.iter().any(|name| {
            let mut chars = name.chars();
            match (chars.next(), chars.next()) {
                (Some(flag), None) => self.is(Some(flag), None, abbreviations),
                _ => self.is(None, Some(name), abbreviations),
            }
        })
    }

    pub(super) fn value(&self) -> Option<Value<'a>> {
        match self {
            Item::Short { value, .. } | Item::Long { value, .. } => *value,
            _ => None,
        }
    }

    /// How the option is written, for reasons: `-o`, `--output`.
    pub(super) fn shown(&self) -> String {
        match self {
            Item::Short { flag, .. } => format!("-{flag}"),
            Item::Long { name, .. } => format!("--{name}"),
            Item::EndOfOptions => "--".to_owned(),
            Item::Operand(word) | Item::Opaque(word) => word.raw.clone(),
        }
    }
}

/// Whether a short flag cluster (`-fdx`) or a long option (`--force`, abbreviated) in
/// `args` names one of `short` / `long`; a word only known at run time may.
pub(super) fn names_any(args: &[Arg], short: &[char], long: &[&str]) -> bool {
    for arg in args {
        let Some(text) = arg.text() else { return true };
        if text == "--" {
            break;
        }
        if let Some(name) = text.strip_prefix("--") {
            let name = name.split_once('=').map_or(name, |(n, _)| n);
            if long.iter().any(|l| long_matches(name, l)) {
                return true;
            }
        } else if let Some(cluster) = text.strip_prefix('-')
            && cluster.chars().any(|c| short.contains(&c))
        {
            return true;
        }
    }
    false
}

/// Whether `written` (as typed after `--`) can name the long option `long`: equal, or a
/// non-empty prefix of it (getopt_long accepts unambiguous abbreviations).
pub(super) fn long_matches(written: &str, long: &str) -> bool {
    !written.is_empty() && long.starts_with(written)
}

/// Reads a command's arguments (without the command name).
pub(super) fn parse<'a>(args: &'a [Arg], spec: &Spec) -> Vec<Item<'a>> {
    let mut items = Vec::with_capacity(args.len());
    let mut options_ended = false;
    let mut index = 0;
    while let Some(word) = args.get(index) {
        index += 1;
        let Some(text) = word.text() else {
            items.push(Item::Opaque(word));
            if spec.stop_at_operand {
                options_ended = true;
            }
            continue;
        };
        if options_ended || text == "-" || !text.starts_with('-') {
            items.push(Item::Operand(word));
            if spec.stop_at_operand {
                options_ended = true;
            }
            continue;
        }
        if text == "--" {
            items.push(Item::EndOfOptions);
            options_ended = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(Value { text: Some(value) })),
                None if spec.long_takes_value(long) => {
                    let next = args.get(index);
                    index += 1;
                    (
                        long,
                        Some(Value {
                            text: next.and_then(Arg::text),
                        }),
                    )
                }
                None => (long, None),
            };
            items.push(Item::Long { name, value });
            continue;
        }
        let cluster = &text[1..];
        for (offset, flag) in cluster.char_indices() {
            let rest = &cluster[offset + flag.len_utf8()..];
            if spec.short_values.contains(flag) {
                let value = if rest.is_empty() {
                    let next = args.get(index);
                    index += 1;
                    Value {
                        text: next.and_then(Arg::text),
                    }
                } else {
                    Value { text: Some(rest) }
                };
                items.push(Item::Short {
                    flag,
                    value: Some(value),
                });
                break;
            }
            if spec.short_optional.contains(flag) {
                let value = (!rest.is_empty()).then_some(Value { text: Some(rest) });
                items.push(Item::Short { flag, value });
                break;
            }
            items.push(Item::Short { flag, value: None });
        }
    }
    items
}

/// The operands (and opaque words) of a parsed command line, in order.
pub(super) fn operands<'a>(items: &[Item<'a>]) -> Vec<&'a Arg> {
    items
        .iter()
        .filter_map(|item| match item {
            Item::Operand(word) | Item::Opaque(word) => Some(*word),
            _ => None,
        })
        .collect()
}

/// Reads a wrapper's options up to the command it runs (POSIX order: options end at the
/// first operand). Returns the options and where the operands start in `args`.
pub(super) fn split_operands<'a>(args: &'a [Arg], spec: &Spec) -> (Vec<Item<'a>>, usize) {
    let spec = spec.posix();
    let items = parse(args, &spec);
    let start = items
        .iter()
        .find_map(|item| match item {
            Item::Operand(word) | Item::Opaque(word) => {
                args.iter().position(|arg| std::ptr::eq(arg, *word))
            }
            _ => None,
        })
        .unwrap_or(args.len());
    let options = items
        .into_iter()
        .filter(|item| !matches!(item, Item::Operand(_) | Item::Opaque(_)))
        .collect();
    (options, start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Arg> {
        words.iter().map(|w| Arg::literal(w)).collect()
    }

    fn render(items: &[Item<'_>]) -> Vec<String> {
        items
            .iter()
            .map(|item| match item {
                Item::Short { flag, value, .. } => format!("-{flag}{}", show_value(value)),
                Item::Long { name, value, .. } => format!("--{name}{}", show_value(value)),
                Item::EndOfOptions => "--".to_owned(),
                Item::Operand(word) => format!("op:{}", word.raw),
                Item::Opaque(word) => format!("opaque:{}", word.raw),
            })
            .collect()
    }

    fn show_value(value: &Option<Value<'_>>) -> String {
        match value {
            Some(v) => format!("={}", v.text.unwrap_or("?")),
            None => String::new(),
        }
    }

    #[test]
    fn clusters_values_and_operands() {
        let spec = Spec::values("n", &["lines"]);
        let words = args(&[
            "-fdx",
            "-n5",
            "-n",
            "3",
            "--lines=2",
            "--lin",
            "7",
            "file",
            "--",
            "-x",
        ]);
        assert_eq!(
            render(&parse(&words, &spec)),
            [
                "-f",
                "-d",
                "-x",
                "-n=5",
                "-n=3",
                "--lines=2",
                "--lin=7",
                "op:file",
                "--",
                "op:-x"
            ]
        );
    }

    #[test]
    fn posix_order_stops_at_the_first_operand() {
        let spec = Spec::values("s", &[]).posix();
        let words = args(&["-s", "KILL", "5", "rm", "-rf", "x"]);
        assert_eq!(
            render(&parse(&words, &spec)),
            ["-s=KILL", "op:5", "op:rm", "op:-rf", "op:x"]
        );
    }

    #[test]
    fn optional_values_are_only_attached() {
        let spec = Spec::NONE.optional("i");
        let words = args(&["-i.bak", "-ni", "x"]);
        assert_eq!(
            render(&parse(&words, &spec)),
            ["-i=.bak", "-n", "-i", "op:x"]
        );
    }
}
