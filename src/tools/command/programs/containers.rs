//! Containers, clusters and infrastructure: `docker`/`podman` (and their compose), `kubectl`
//! and `terraform`/`tofu`. None is on the read-only whitelist; their removing forms
//! (`docker rm`, `docker system prune`, `compose down -v`, `kubectl delete`/`drain`,
//! `terraform destroy`) are destructive, and the command `docker exec` or `kubectl exec`
//! runs inside a container is judged on its own, one level deeper.

use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Spec};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["docker", "podman"], Rule::Judge(docker)),
    Program::new(
        &["docker-compose", "podman-compose"],
        Rule::Judge(|_, call| compose(call.program, call.args)),
    ),
    Program::new(&["kubectl"], Rule::Judge(kubectl)),
    Program::new(
        &["terraform", "tofu"],
        Rule::Judge(|_, call| terraform(call.program, call.args)),
    ),
];

const DOCKER: Spec = Spec::values(
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
.posix();

fn docker(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    let args = invocation.args;
    let items = options::parse(args, &DOCKER);
    let operands = options::operands(&items);
    let Some(verb) = operands.first() else {
        return Judgement::not_whitelisted(program);
    };
    let object_verb = operands
        .iter()
        .skip(1)
        .find(|a| a.may_be(|t| !t.starts_with('-')));
    let removes = |v: &str| matches!(v, "rm" | "remove" | "rmi" | "prune" | "kill");
    let destructive = verb.may_be(|v| matches!(v, "rm" | "rmi" | "kill"))
        || (verb.may_be(|v| {
            matches!(
                v,
                "container" | "image" | "volume" | "network" | "system" | "builder" | "buildx"
            )
        }) && object_verb.is_some_and(|o| o.may_be(removes)))
        || (verb.text() == Some("compose")
            && object_verb.is_some_and(|o| o.text() == Some("down"))
            && args.iter().any(|a| {
                a.may_be(|t| matches!(t, "-v" | "--volumes" | "--rmi") || t.starts_with("--rmi="))
            }));
    if destructive {
        return Judgement::destroys(format!(
            "`{program} {}` removes or kills containers, images, volumes or networks",
            operands
                .iter()
                .take(2)
                .map(|a| a.raw.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    if verb.text() == Some("exec") {
        // `docker exec [options] container cmd ...`
        let exec_spec = Spec::values(
            "euw",
            &["env", "env-file", "user", "workdir", "detach-keys"],
        )
        .exact()
        .posix();
        let start = args
            .iter()
            .position(|a| a.text() == Some("exec"))
            .map_or(0, |i| i + 1);
        let rest = &args[start..];
        let exec_items = options::parse(rest, &exec_spec);
        let exec_operands = options::operands(&exec_items);
        if exec_operands.len() > 1
            && let Some(at) = rest.iter().position(|a| std::ptr::eq(a, exec_operands[1]))
        {
            walker.judge(&rest[at..], invocation.stdin, invocation.depth + 1);
        }
    }
    Judgement::not_whitelisted(program)
}

/// `docker-compose down -v` (like `docker compose down -v`) deletes the project's volumes.
fn compose(program: &str, args: &[Arg]) -> Judgement {
    let down = args.iter().any(|a| a.may_be(|t| t == "down"));
    let volumes = args.iter().any(|a| {
        a.may_be(|t| matches!(t, "-v" | "--volumes" | "--rmi") || t.starts_with("--rmi="))
    });
    if down && volumes {
        Judgement::destroys(format!("`{program} down -v` deletes the project's volumes"))
    } else {
        Judgement::not_whitelisted(program)
    }
}

const KUBECTL: Spec = Spec::values(
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
.exact();

fn kubectl(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let args = invocation.args;
    let items = options::parse(args, &KUBECTL);
    let operands = options::operands(&items);
    let Some(verb) = operands.first() else {
        return Judgement::not_whitelisted("kubectl");
    };
    if verb.may_be(|v| matches!(v, "delete" | "drain")) {
        return Judgement::destroys(format!(
            "`kubectl {}` deletes or evicts cluster resources",
            verb.raw
        ));
    }
    if verb.text() == Some("exec") {
        // `kubectl exec pod -- cmd ...` runs cmd in the pod.
        if let Some(split) = args.iter().position(|a| a.text() == Some("--")) {
            walker.judge(&args[split + 1..], invocation.stdin, invocation.depth + 1);
        }
    }
    Judgement::not_whitelisted("kubectl")
}

fn terraform(program: &str, args: &[Arg]) -> Judgement {
    let operands: Vec<&Arg> = args
        .iter()
        .filter(|a| a.may_be(|t| !t.starts_with('-')))
        .collect();
    let Some(verb) = operands.first() else {
        return Judgement::not_whitelisted(program);
    };
    let destroy_flag = args
        .iter()
        .any(|a| a.may_be(|t| t == "-destroy" || t == "--destroy" || t.starts_with("-destroy=")));
    if verb.may_be(|v| v == "destroy") || (verb.text() == Some("apply") && destroy_flag) {
        return Judgement::destroys(format!(
            "`{program} {}` destroys managed infrastructure",
            verb.raw
        ));
    }
    Judgement::not_whitelisted(program)
}

#[cfg(test)]
mod tests {
    #[test]
    fn containers_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("kubectl get pods", Unknown),
            ("docker ps", Unknown),
            ("docker-compose up -d", Unknown),
            ("docker run --rm alpine ls", Unknown),
            ("terraform plan", Unknown),
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
        ]);
    }
}
