//! Containers, clusters and infrastructure: `docker`/`podman` (and their compose), `kubectl`,
//! `helm` and `terraform`/`tofu`. Read-only: what works on files (`compose config`, `helm
//! lint`/`template` on a chart on disk, the forms `kubectl`/`terraform` have below), and
//! what the local engine lists of itself (`ps`, `images`, `version`, `info`, `port`,
//! `history`, `stats --no-stream`, `ls` of its objects, `system df`, compose `ps`): facts
//! of the machine as `systemctl status` is, with no container's environment (`inspect`) or
//! output (`logs`), and not where the client is pointed at another engine (`-H`,
//! `--context`, `--config`, podman's `--remote`/`--url`/`--connection`). A line without a
//! click reaches no engine's socket, so there these fail and say so. Their removing forms (`docker rm`, `docker system
//! prune`, `compose down -v`, `kubectl delete`/`drain`, `helm uninstall`, `terraform
//! destroy`) are destructive, and the command `docker exec` or `kubectl exec` runs inside a
//! container is judged on its own, one level deeper.

use super::subcommands::{Global, SUBCOMMANDS, Subcommands, Verb, options_before_wait};
use super::table::{Effect, Operands, Refusal, TABLE, Table};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Spec};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["docker", "podman"], Rule::Subcommands(&DOCKER)),
    Program::new(
        &["docker-compose", "podman-compose"],
        Rule::Subcommands(&COMPOSE),
    ),
    Program::new(&["kubectl"], Rule::Subcommands(&KUBECTL)),
    Program::new(&["helm"], Rule::Subcommands(&HELM)),
    Program::new(&["terraform", "tofu"], Rule::Subcommands(&TERRAFORM)),
];

/// What removing forms do, for `docker` and its object commands alike.
const REMOVES: &str = "removes or kills containers, images, volumes or networks";

const DOCKER: Subcommands = Subcommands {
    global: Global::Options(
        Spec::values(
            "Hcl",
            &[
                "host",
                "context",
                "config",
                "log-level",
                "tlscacert",
                "tlscert",
                "tlskey",
            ],
        )
        .exact()
        .posix(),
    ),
    verbs: &[
        Verb::destroys(&["rm", "rmi", "kill"], REMOVES),
        Verb::reads(
            &["ps", "images", "version", "info", "port", "history"],
            &ENGINE_LISTS,
        ),
        Verb::judged(&["stats"], stats_once),
        Verb::nested(
            &[
                "container",
                "image",
                "volume",
                "network",
                "system",
                "builder",
                "buildx",
            ],
            &DOCKER_OBJECTS,
        ),
        Verb::nested(&["compose"], &COMPOSE),
        Verb::judged(&["exec"], docker_exec),
    ],
    elsewhere: ENGINE_ELSEWHERE,
    ..SUBCOMMANDS
};

/// Options that point the client at another engine (`-H tcp://...`, a context, another
/// configuration directory, podman's remote connections): such a call waits.
const ENGINE_ELSEWHERE: &[&str] = &[
    "H",
    "host",
    "c",
    "context",
    "config",
    "remote",
    "url",
    "connection",
    "identity",
];

/// What the engine lists: containers, images, versions, ports, an image's layers, disk use.
/// Names and states, no container's environment (`inspect` shows it, and it often holds
/// secrets) or output (`logs`), so neither of those is here.
const ENGINE_LISTS: Table = Table {
    spec: Spec::values("fn", &["filter", "format", "last"]),
    operands: Operands::Text,
    ..TABLE
};

/// `docker stats --no-stream`: the counters once; without it they print until stopped.
fn stats_once(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let words: Vec<Option<&str>> = call.args.iter().map(Arg::text).collect();
    if words.contains(&Some("--no-stream")) && words.iter().all(Option::is_some) {
        Judgement::whitelisted()
    } else {
        Judgement::other(format!(
            "`{}` without `--no-stream` prints until it is stopped",
            call.program
        ))
    }
}

/// `docker container rm`, `docker system prune`, ...
const DOCKER_OBJECTS: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(&["rm", "remove", "rmi", "prune", "kill"], REMOVES),
        Verb::reads(&["ls", "list", "df", "port", "history"], &ENGINE_LISTS),
    ],
    ..SUBCOMMANDS
};

/// `docker compose` and `docker-compose`: `down -v` deletes the project's volumes, `rm`
/// its stopped containers.
const COMPOSE: Subcommands = Subcommands {
    global: Global::Reader(compose_globals),
    verbs: &[
        Verb::judged(&["down"], compose_down),
        Verb::destroys(&["rm"], "removes the project's stopped containers"),
        Verb::reads(&["ps", "ls", "images", "version"], &ENGINE_LISTS),
        // The project's configuration, merged and with its variables put in, printed
        // without asking the engine; `-o` writes it, `--resolve-image-digests` asks a
        // registry.
        Verb::reads(
            &["config", "convert"],
            &Table {
                spec: Spec::values("o", &["output", "format", "hash"]),
                operands: Operands::Text,
                refused: &[
                    Refusal {
                        options: &["o", "output"],
                        effect: Effect::Writes,
                        what: "writes the configuration to a file, replacing it",
                    },
                    Refusal {
                        options: &["resolve-image-digests"],
                        effect: Effect::Unsafe,
                        what: "asks the registry for each image's digest, over the network",
                    },
                ],
                ..TABLE
            },
        ),
    ],
    ..SUBCOMMANDS
};

/// Compose's own options before its subcommand: the files they name (`-f`, `--env-file`,
/// `--project-directory`) are read, so they are checked like operands. Returns where the
/// subcommand is.
fn compose_globals(
    walker: &mut Walker<'_>,
    invocation: &Invocation<'_>,
    judgement: &mut Judgement,
) -> usize {
    const GLOBALS: Spec = Spec::values(
        "fp",
        &[
            "file",
            "project-name",
            "project-directory",
            "env-file",
            "profile",
            "ansi",
            "progress",
            "parallel",
        ],
    )
    .exact()
    .posix();
    let items = options::parse(invocation.args, &GLOBALS);
    for item in &items {
        if item.named(&["f", "file", "env-file", "project-directory"], false) {
            super::table::check_value(walker, judgement, invocation.program, item);
        }
    }
    options::operands(&items)
        .first()
        .and_then(|first| invocation.args.iter().position(|a| std::ptr::eq(a, *first)))
        .unwrap_or(invocation.args.len())
}

/// `docker exec [options] container cmd ...` runs `cmd` in the container: judged on its
/// own, one level deeper.
fn docker_exec(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let spec = Spec::values(
        "euw",
        &["env", "env-file", "user", "workdir", "detach-keys"],
    )
    .exact()
    .posix();
    let items = options::parse(call.args, &spec);
    let operands = options::operands(&items);
    if let Some(command) = operands.get(1)
        && let Some(at) = call.args.iter().position(|a| std::ptr::eq(a, *command))
    {
        walker.judge(&call.args[at..], call.stdin, call.depth + 1);
    }
    Judgement::not_whitelisted(call.program)
}

fn compose_down(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let volumes = call.args.iter().any(|a| {
        a.may_be(|t| matches!(t, "-v" | "--volumes" | "--rmi") || t.starts_with("--rmi="))
    });
    if volumes {
        Judgement::destroys(format!(
            "`{} -v` deletes the project's volumes",
            call.program
        ))
    } else {
        Judgement::not_whitelisted(call.program)
    }
}

const KUBECTL: Subcommands = Subcommands {
    global: Global::Options(
        Spec::values(
            "nsv",
            &[
                "namespace",
                "context",
                "cluster",
                "user",
                "kubeconfig",
                "server",
                "token",
                "as",
                "as-group",
                "as-uid",
                "cache-dir",
                "certificate-authority",
                "client-certificate",
                "client-key",
                "request-timeout",
                "tls-server-name",
                "v",
            ],
        )
        .exact(),
    ),
    verbs: &[
        Verb::destroys(&["delete", "drain"], "deletes or evicts cluster resources"),
        Verb::judged(&["exec"], kubectl_exec),
        Verb::judged(&["version"], kubectl_version),
        // The global options, and a shell's completion script: printed, nothing asked.
        Verb::reads(
            &["options", "completion"],
            &Table {
                operands: Operands::Text,
                ..TABLE
            },
        ),
        Verb::nested(&["config"], &KUBECTL_CONFIG),
    ],
    ..SUBCOMMANDS
};

/// `kubectl version --client` prints the client's version; without `--client` it asks the
/// cluster's API server too.
fn kubectl_version(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let client_only = call.args.iter().any(|arg| {
        arg.text()
            .is_some_and(|t| matches!(t, "--client" | "--client=true"))
    });
    let only_options = call
        .args
        .iter()
        .all(|arg| arg.text().is_some_and(|t| t.starts_with("--")));
    if client_only && only_options {
        Judgement::whitelisted()
    } else {
        Judgement::other(format!(
            "`{}` asks the cluster's API server over the network (`--client` does not)",
            call.program
        ))
    }
}

/// The kubeconfig's names: which contexts and clusters there are, and the current one.
/// `view` prints its settings with credentials left out unless `--raw` (or `--flatten`,
/// which embeds the certificates) asks for them; the `set`/`use`/`delete` forms change it.
const KUBECTL_CONFIG: Subcommands = Subcommands {
    verbs: &[Verb::reads(
        &[
            "get-contexts",
            "get-clusters",
            "get-users",
            "current-context",
            "view",
        ],
        &Table {
            spec: Spec::values("o", &["output", "template"]),
            operands: Operands::Text,
            refused: &[Refusal {
                options: &["raw", "flatten"],
                effect: Effect::Unsafe,
                what: "prints the credentials the kubeconfig holds",
            }],
            ..TABLE
        },
    )],
    ..SUBCOMMANDS
};

/// `kubectl exec pod -- cmd ...` runs `cmd` in the pod: judged on its own, one level deeper.
fn kubectl_exec(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    if let Some(split) = call.args.iter().position(|a| a.text() == Some("--")) {
        walker.judge(&call.args[split + 1..], call.stdin, call.depth + 1);
    }
    Judgement::not_whitelisted(call.program)
}

/// Terraform's own options are single-dash words (`-chdir=infra`) that take no separate
/// value, so the first other word is the subcommand.
const TERRAFORM: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(&["destroy"], "destroys managed infrastructure"),
        Verb::judged(&["apply"], terraform_apply),
        Verb::judged(&["fmt"], terraform_fmt),
    ],
    // `-chdir=DIR` moves the whole run elsewhere; no global option is read here.
    global: options_before_wait(),
    ..SUBCOMMANDS
};

/// `terraform fmt -check` (or `-write=false`) reads the configuration files and says which
/// are not formatted, with `-diff` how; without it, `fmt` rewrites them. It loads no
/// provider and reads no state.
fn terraform_fmt(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let program = call.program;
    let mut judgement = Judgement::whitelisted();
    let mut checks = false;
    for arg in call.args {
        let Some(text) = arg.text() else {
            judgement.unknown(format!(
                "`{program} fmt {}` is only known when the line runs",
                arg.raw
            ));
            continue;
        };
        let option = text.strip_prefix("--").or_else(|| text.strip_prefix('-'));
        match option {
            Some("check" | "write=false") => checks = true,
            Some("diff" | "recursive" | "no-color" | "list=true" | "list=false") => {}
            Some(_) if text != "-" => judgement.unknown(format!(
                "`{program} fmt {text}` is not an option known to only read"
            )),
            _ => walker.check_path(&mut judgement, program, text),
        }
    }
    if !checks {
        judgement.destructive(format!(
            "`{program} fmt` without `-check` rewrites the configuration files"
        ));
    }
    judgement
}

/// `terraform apply -destroy` is `terraform destroy`.
fn terraform_apply(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let destroy = call
        .args
        .iter()
        .any(|a| a.may_be(|t| t == "-destroy" || t == "--destroy" || t.starts_with("-destroy=")));
    if destroy {
        Judgement::destroys(format!(
            "`{} -destroy` destroys managed infrastructure",
            call.program
        ))
    } else {
        Judgement::not_whitelisted(call.program)
    }
}

/// `helm`'s forms that work on a chart on disk and print: `lint`, `template` (rendered to
/// the output; `--output-dir` writes, `--post-renderer` runs a program), `show`/`inspect`,
/// `dependency list`, `version`, `env`. A chart named by a URL (`oci://...`, `https://...`)
/// is fetched over the network. `uninstall` removes a release from the cluster; the other
/// forms ask or change the cluster.
const HELM: Subcommands = Subcommands {
    global: Global::Options(
        Spec::values(
            "n",
            &[
                "kubeconfig",
                "kube-context",
                "namespace",
                "registry-config",
                "repository-cache",
                "repository-config",
                "kube-apiserver",
                "kube-as-user",
                "kube-as-group",
                "kube-ca-file",
                "kube-token",
                "burst-limit",
                "qps",
            ],
        )
        .exact()
        .posix(),
    ),
    verbs: &[
        Verb::destroys(
            &["uninstall", "delete", "del", "un"],
            "removes a release and its resources from the cluster",
        ),
        Verb::judged(&["lint", "template"], helm_local),
        Verb::nested(&["show", "inspect"], &HELM_SHOW),
        Verb::nested(&["dependency", "dep", "dependencies"], &HELM_DEPENDENCY),
        Verb::reads(
            &["version", "env"],
            &Table {
                spec: Spec::values("", &["template"]),
                operands: Operands::Text,
                ..TABLE
            },
        ),
    ],
    ..SUBCOMMANDS
};

const HELM_SHOW: Subcommands = Subcommands {
    verbs: &[Verb::judged(
        &["all", "chart", "readme", "values", "crds"],
        helm_local,
    )],
    ..SUBCOMMANDS
};

const HELM_DEPENDENCY: Subcommands = Subcommands {
    verbs: &[Verb::reads(&["list", "ls"], &TABLE)],
    ..SUBCOMMANDS
};

/// A chart on disk, rendered or checked: the values files (`-f`) and the chart are read;
/// `--output-dir` writes, `--post-renderer` runs a program, `--set-file` reads a file named
/// after its `=`, and a URL is fetched.
fn helm_local(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const CHART: Table = Table {
        spec: Spec::values(
            "fn",
            &[
                "values",
                "set",
                "set-string",
                "set-file",
                "set-json",
                "set-literal",
                "version",
                "namespace",
                "kube-version",
                "api-versions",
                "repo",
                "username",
                "password",
                "ca-file",
                "cert-file",
                "key-file",
                "keyring",
                "post-renderer",
                "post-renderer-args",
                "output-dir",
                "release-name",
                "name-template",
                "show-only",
                "description",
                "jsonpath",
            ],
        )
        .exact(),
        path_options: &["f", "values", "ca-file", "cert-file", "key-file", "keyring"],
        refused: &[
            Refusal {
                options: &["output-dir"],
                effect: Effect::Writes,
                what: "writes the rendered files into a directory",
            },
            Refusal {
                options: &["post-renderer", "set-file", "repo"],
                effect: Effect::Unsafe,
                what: "runs a program, reads a file not checked here, or asks a chart repository",
            },
        ],
        ..TABLE
    };
    let mut judgement = super::table::judge(walker, call, &CHART);
    super::table::refuse_urls(&mut judgement, call);
    judgement
}

#[cfg(test)]
mod tests {
    #[test]
    fn containers_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("helm lint src", Safe),
            ("helm template release src -f notes.txt --set a=b", Safe),
            ("helm show values src", Safe),
            ("helm dependency list src", Safe),
            ("helm version", Safe),
            ("helm template release src --output-dir out", Destructive),
            ("helm template release src --post-renderer ./hook", Unknown),
            (
                "helm template release src --set-file k=/etc/shadow",
                Unknown,
            ),
            ("helm template release oci://registry/chart", Unknown),
            ("helm lint /etc/chart", Unknown),
            ("helm template release src -f /etc/values.yaml", Unknown),
            ("helm uninstall release", Destructive),
            ("helm install release src", Unknown),
            ("helm list", Unknown),
            ("helm dependency update src", Unknown),
            ("docker compose config", Safe),
            ("docker-compose -f notes.txt config --services", Safe),
            ("docker compose config -o out.yml", Destructive),
            ("docker compose config --resolve-image-digests", Unknown),
            ("docker compose -f /etc/compose.yml config", Unknown),
            ("docker-compose --env-file /etc/secrets.env config", Unknown),
            ("docker ps", Safe),
            ("docker ps -a --format '{{.Names}}'", Safe),
            ("docker images -q --filter dangling=true", Safe),
            ("docker container ls -a", Safe),
            ("docker volume ls", Safe),
            ("docker system df", Safe),
            ("podman ps -a", Safe),
            ("docker compose ps", Safe),
            ("docker-compose ps", Safe),
            ("docker stats --no-stream", Safe),
            ("docker stats", Unknown),
            ("docker -H tcp://10.0.0.1:2375 ps", Unknown),
            ("docker --context prod ps", Unknown),
            ("docker --config /tmp/x images", Unknown),
            ("podman --remote ps", Unknown),
            ("podman --url ssh://host ps", Unknown),
            ("docker inspect web", Unknown),
            ("docker container inspect web", Unknown),
            ("docker logs web", Unknown),
            ("docker system events", Unknown),
            ("docker search nginx", Unknown),
            ("docker-compose up -d", Unknown),
            ("docker run --rm alpine ls", Unknown),
            ("terraform plan", Unknown),
            ("terraform fmt -check", Safe),
            ("terraform fmt -check -diff -recursive src", Safe),
            ("tofu fmt -write=false", Safe),
            ("terraform fmt -check ../other", Unknown),
            ("terraform fmt -check -write=true", Unknown),
            ("terraform -chdir=/etc fmt -check", Unknown),
            ("terraform fmt", Destructive),
            ("terraform fmt -recursive", Destructive),
            ("kubectl delete pod web-1", Destructive),
            ("kubectl -n prod delete pod x", Destructive),
            ("kubectl --namespace prod drain node-1", Destructive),
            ("terraform destroy -auto-approve", Destructive),
            ("terraform -chdir=infra destroy", Destructive),
            ("terraform apply -destroy", Destructive),
            ("docker rm -f web", Destructive),
            ("docker rmi image", Destructive),
            ("docker kill web", Destructive),
            ("docker system prune -af", Destructive),
            ("docker volume rm data", Destructive),
            ("docker container prune", Destructive),
            ("docker -H tcp://x rm web", Destructive),
            ("podman rm web", Destructive),
            ("docker compose down -v", Destructive),
            ("docker-compose down --volumes", Destructive),
            ("docker compose -f prod.yml down -v", Destructive),
            ("docker compose -f prod.yml down", Unknown),
            ("docker compose rm -f", Destructive),
            ("docker $VERB web", Destructive),
            ("docker container $VERB web", Destructive),
            ("kubectl $VERB pod x", Destructive),
            ("kubectl exec web -- rm -rf /srv", Destructive),
            ("kubectl exec web -- ls", Unknown),
            ("docker exec -u root web rm -rf /srv", Destructive),
            ("docker exec web ls", Unknown),
            ("terraform apply", Unknown),
            ("kubectl version --client", Safe),
            ("kubectl version --client --output=yaml", Safe),
            ("kubectl version", Unknown),
            ("kubectl version --short", Unknown),
            ("kubectl config get-contexts", Safe),
            ("kubectl options", Safe),
            ("kubectl completion bash", Safe),
            ("kubectl config current-context", Safe),
            ("kubectl config view --minify", Safe),
            ("kubectl config view --raw", Unknown),
            ("kubectl config use-context prod", Unknown),
            ("kubectl config delete-context prod", Unknown),
            ("docker version", Safe),
            ("docker -c prod version", Unknown),
            ("helm version", Safe),
        ]);
    }
}
