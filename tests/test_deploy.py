"""The deployment files in deploy/ hold together: the compose file parses (Docker is not run
here) and brings up three nertz processes, Redis, PostgreSQL and a proxy wired to each other;
every nertz command in them is one ``nertz serve`` accepts; the proxy passes WebSocket upgrades
on to all three and outwaits the server's pings (and nginx itself accepts the site, where nginx
is installed); the systemd unit runs the server."""

from __future__ import annotations

import configparser
import ipaddress
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from nertz.cli import build_parser
from nertz.server.serve import server_config

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return data


def serve_args(argv: list[str]) -> Any:
    """``argv`` (from ``nertz``) parsed as the command line would parse it."""
    assert argv[0].endswith("nertz") and argv[1] == "serve", argv
    return build_parser().parse_args(argv[1:])


def test_compose_brings_up_three_servers_redis_postgres_and_a_proxy() -> None:
    services = compose()["services"]
    assert set(services) == {"nertz1", "nertz2", "nertz3", "redis", "postgres", "proxy"}
    proxy_address = services["proxy"]["networks"]["nertz"]["ipv4_address"]
    subnet = compose()["networks"]["nertz"]["ipam"]["config"][0]["subnet"]
    assert ipaddress.ip_address(proxy_address) in ipaddress.ip_network(subnet)
    pg = services["postgres"]["environment"]
    for name in ("nertz1", "nertz2", "nertz3"):
        service = services[name]
        assert service["image"] == "nertz:local"
        args = serve_args(service["command"])
        db = urlsplit(args.db)
        assert (db.scheme, db.hostname, db.username, db.password, db.path) == (
            "postgresql", "postgres", pg["POSTGRES_USER"], pg["POSTGRES_PASSWORD"],
            "/" + pg["POSTGRES_DB"])
        assert urlsplit(args.redis).hostname == "redis"
        assert args.host == "0.0.0.0" and args.port == 8000
        assert args.trust_proxy == [proxy_address]
        assert "healthz" in " ".join(service["healthcheck"]["test"])
    # One process migrates the schema before the others start.
    assert services["nertz1"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("nertz2", "nertz3"):
        assert services[name]["depends_on"]["nertz1"]["condition"] == "service_healthy"
    build = services["nertz1"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"


def test_the_proxy_passes_websockets_to_every_server() -> None:
    proxy = compose()["services"]["proxy"]
    mounted = [v.split(":")[0] for v in proxy["volumes"]]
    assert mounted == ["./nginx.conf"]
    conf = (DEPLOY / "nginx.conf").read_text()
    upstream = re.findall(r"^\s*server\s+(\S+?):(\d+)", conf, re.M)
    assert upstream == [("nertz1", "8000"), ("nertz2", "8000"), ("nertz3", "8000")]
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert "proxy_set_header Connection $connection_upgrade;" in conf
    assert "proxy_http_version 1.1;" in conf
    assert "X-Forwarded-For" in conf and "Host $http_host" in conf
    # The proxy must not hang up on a quiet socket between two of the server's pings.
    timeout = int(re.search(r"proxy_read_timeout (\d+)s;", conf).group(1))  # type: ignore[union-attr]
    ping = server_config(None, "127.0.0.1", 0).ws_ping_interval
    assert ping is not None and timeout > 2 * ping
    directives = "\n".join(line.split("#")[0] for line in conf.splitlines())
    assert "sticky" not in directives and "ip_hash" not in directives and "hash " not in directives


def test_the_systemd_unit_runs_the_server() -> None:
    unit = configparser.ConfigParser(interpolation=None, strict=False)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(DEPLOY / "nertz.service")
    service = unit["Service"]
    args = serve_args(shlex.split(service["ExecStart"]))
    assert args.db.startswith("sqlite:////var/lib/nertz/")
    assert service["StateDirectory"] == "nertz" and service["Restart"] == "on-failure"
    assert args.trust_proxy == ["127.0.0.1"] and args.host == "127.0.0.1"
    assert unit["Install"]["WantedBy"] == "multi-user.target"


def test_the_image_serves_on_the_port_compose_uses() -> None:
    docker = (DEPLOY / "Dockerfile").read_text()
    cmd = re.findall(r"^CMD (\[.*\])$", docker, re.M)[-1]
    args = serve_args(yaml.safe_load(cmd))
    assert args.port == 8000 and args.host == "0.0.0.0"
    assert "EXPOSE 8000" in docker


def test_nginx_accepts_the_site(tmp_path: Path) -> None:
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists()
                                      else None)
    if nginx is None:
        pytest.skip("nginx is not installed here: its syntax check is skipped")
    # The compose service names resolve only inside compose: point them at this machine.
    site = re.sub(r"nertz(\d):8000", r"127.0.0.1:800\1", (DEPLOY / "nginx.conf").read_text())
    (tmp_path / "site.conf").write_text(site)
    temp = {name: tmp_path / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for folder in temp.values():
        folder.mkdir()
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        "http {\n    access_log off;\n"
        + "".join(f"    {name}_temp_path {folder};\n" if name != "body"
                  else f"    client_body_temp_path {folder};\n"
                  for name, folder in temp.items())
        + f"    include {tmp_path}/site.conf;\n}}\n")
    out = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                          "-e", str(tmp_path / "error.log")],
                         capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 0, out.stderr
    assert "syntax is ok" in out.stderr


def commented_commands(text: str) -> list[list[str]]:
    """The ``nertz serve`` command lines written out in ``text`` (in comments or shell blocks,
    continued over lines ending in a backslash)."""
    lines = [line.strip().lstrip("#").strip() for line in text.splitlines()]
    commands, current = [], ""
    for line in lines:
        if current:
            current += " " + line.rstrip("\\").strip()
        elif "/nertz serve " in line and "ExecStart=" in line:
            current = line.split("ExecStart=", 1)[1].rstrip("\\").strip()
        if current and not line.endswith("\\"):
            commands.append(shlex.split(current))
            current = ""
    return commands


def test_the_multi_process_commands_written_out_are_accepted() -> None:
    found = 0
    for text in ((DEPLOY / "nertz.service").read_text(),
                 (DEPLOY.parent / "docs" / "deploy.md").read_text()):
        for argv in commented_commands(text):
            args = serve_args(argv)
            found += 1
            if args.workers > 1:
                assert args.redis.startswith("redis://") and args.db.startswith("postgresql://")
    assert found >= 3  # the unit's own, the unit's comment, the guide's
