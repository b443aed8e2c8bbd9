"""``theorembench improof serve`` (the web platform) and ``theorembench improof admin create`` (the first admin)."""

from __future__ import annotations

import getpass
import os
import sys
from typing import Annotated

import typer

from theorembench.cli.common import DbOption, fail, opened_store, out, plain, user_errors
from theorembench.cli.improof_app import improof_app

admin_app = typer.Typer(help="Platform accounts: create an administrator.", no_args_is_help=True)
improof_app.add_typer(admin_app, name="admin")

SECRET_ENV = "THEOREMBENCH_WEB_SECRET"
SMTP_ENV = "THEOREMBENCH_SMTP_URL"


@improof_app.command("serve")
def serve_cmd(
    host: Annotated[str, typer.Option("--host", help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="The port to listen on.")] = 8000,
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="A model authors and admins may run "
                                                  "(repeat for several; default: $THEOREMBENCH_PLATFORM_MODELS, "
                                                  "else the embedded model).")] = None,
    workers: Annotated[int, typer.Option("--workers", min=0, help="Background threads running model tests and "
                                         "evaluations (0: queue only, another process runs them).")] = 1,
    processes: Annotated[int, typer.Option("--processes", min=1, help="Server processes answering requests (each "
                                           "with its --workers job threads); use a PostgreSQL store with several.")]
    = 1,
    db: DbOption = None,
) -> None:
    """Serve the IMProofBench platform: authoring, review, evaluations, blind grading, statistics.

    It creates no account by itself (see 'improof admin create'). Set THEOREMBENCH_WEB_SECRET to
    keep forms valid across restarts, THEOREMBENCH_SMTP_URL to send mails (smtp://,
    smtp+starttls:// or smtps://), THEOREMBENCH_WEB_BASE_URL for the links in mails.
    """
    import uvicorn

    from theorembench.web.app import create_app
    from theorembench.web.served import FACTORY, serve_environment

    with user_errors():  # the store is opened (and migrated) once here, so that bad input fails before any process
        app = create_app(db, secret_key=os.environ.get(SECRET_ENV), smtp_url=os.environ.get(SMTP_ENV), models=model,
                         workers=workers if processes == 1 else 0)  # fmt: skip
    how = f" in {processes} processes" if processes > 1 else ""
    out.print(plain(f"IMProofBench platform on http://{host}:{port}/{how} (create the first admin with "
                    "'theorembench improof admin create EMAIL')"))  # fmt: skip
    if processes == 1:
        uvicorn.run(app, host=host, port=port, log_level="info")
        return
    app.state.store.close()
    os.environ.update(serve_environment(db, secret_key=os.environ.get(SECRET_ENV), smtp_url=os.environ.get(SMTP_ENV),
                                        models=model, job_workers=workers))  # fmt: skip
    uvicorn.run(FACTORY, factory=True, workers=processes, host=host, port=port, log_level="info")


@admin_app.command("create")
def admin_create_cmd(
    email: Annotated[str, typer.Argument(help="The administrator's email address.")],
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the password from standard input.")]
    = False,
    db: DbOption = None,
) -> None:
    """Create a verified administrator (or make an existing account one, with this password)."""
    from theorembench.store.accounts import AccountRepo
    from theorembench.web.accounts import AccountError, create_admin

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != password:
            raise fail("the two passwords differ")
    with opened_store(db) as st:
        try:
            user_id = create_admin(AccountRepo(st), email, password)
        except AccountError as exc:
            raise fail(str(exc)) from None
    out.print(plain(f"administrator {email.strip().lower()} ({user_id})"))
