"""One sample secret of every detector family the verifier's scanner runs, in the context a trace
would hold it (for the scanner's own tests and the trace recorder's stripping tests). The prefixes
are split so that no secret-shaped literal sits in the source."""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
TOKEN = ALNUM + "_-"
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # the detect-secrets secret_type
    context: str  # the text a trace would hold
    value: str  # the secret inside it: the part of context a hit's offset points at

    @property
    def value_at(self) -> int:
        return self.context.index(self.value)


def make_cases(seed: int) -> list[Case]:
    rng = random.Random(seed)

    def pick(chars: str, n: int) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    def b64url(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    jwt = ".".join((b64url(b'{"alg":"HS256","typ":"JWT"}'),
                    b64url(json.dumps({"sub": pick(LOWER_ALNUM, 8)}).encode()),
                    b64url(rng.randbytes(32))))
    # Prefixes are split so that no secret-shaped literal sits in the source.
    aws = "AK" + "IA" + pick(string.ascii_uppercase + string.digits, 16)
    aws_secret = pick(ALNUM + "/+", 40)
    pem = "BEGIN " + "RSA PRIVATE KEY"
    github = "gh" + "p_" + pick(ALNUM, 36)
    gitlab = "gl" + "pat-" + pick(TOKEN, 20)
    slack = "xo" + f"xb-{pick(string.digits, 12)}-{pick(string.digits, 13)}-{pick(LOWER_ALNUM, 24)}"
    hook = ("https://hooks.slack.com/services/" + f"T{pick(ALNUM, 8)}/B{pick(ALNUM, 8)}/"
            f"{pick(ALNUM, 24)}")
    stripe = "sk" + "_live_" + pick(ALNUM, 24)
    twilio = "A" + "C" + pick(LOWER_ALNUM, 32)
    sendgrid = "S" + f"G.{pick(TOKEN, 22)}.{pick(TOKEN, 43)}"
    npm = "npm_" + pick(ALNUM, 36)
    pypi = "pypi-" + "AgEIcHlwaS5vcmc" + pick(TOKEN, 72)
    azure = "Account" + "Key=" + base64.b64encode(rng.randbytes(64)).decode()
    discord = f"M{pick(TOKEN, 23)}.{pick(TOKEN, 6)}.{pick(TOKEN, 27)}"
    mailchimp = pick(HEX, 32) + "-us12"
    openai = f"sk-{pick(ALNUM, 20)}" + "T3Blbk" + f"FJ{pick(ALNUM, 20)}"
    password = pick(ALNUM, 16)
    telegram = f"{pick('123456789', 9)}:{pick(TOKEN, 35)}"
    square = "sq0" + "csp-" + pick(TOKEN, 43)
    artifactory = "AK" + "C" + pick(ALNUM, 60)
    ibm_iam = pick(TOKEN, 44)
    cos = pick(HEX, 48)
    softlayer = pick(LOWER_ALNUM, 64)
    cloudant = pick(HEX, 64)
    return [Case(*fields) for fields in (
        ("private_key", "Private Key", f"-----{pem}-----\n{pick(ALNUM, 64)}\n-----END", pem),
        ("aws_key_id", "AWS Access Key", f"export AWS_ACCESS_KEY_ID={aws}", aws),
        ("aws_secret", "AWS Access Key", f'aws_secret_access_key = "{aws_secret}"', aws_secret),
        ("github", "GitHub Token", f"GITHUB_TOKEN={github}", github),
        ("gitlab", "GitLab Token", f"token {gitlab} ok", gitlab),
        ("slack", "Slack Token", f"SLACK_BOT_TOKEN={slack}", slack),
        ("slack_webhook", "Slack Token", f"curl -X POST {hook}", hook),
        ("stripe", "Stripe Access Key", f"stripe.api_key = {stripe}", stripe),
        ("twilio", "Twilio API Key", f"sid={twilio}", twilio),
        ("sendgrid", "SendGrid API Key", f"SENDGRID={sendgrid}", sendgrid),
        ("npm", "NPM tokens", "//registry.npmjs.org/:_auth" + f"Token={npm}", npm),
        ("pypi", "PyPI Token", f"password = {pypi}", pypi),
        ("jwt", "JSON Web Token", f"Authorization: Bearer {jwt}", jwt),
        ("azure", "Azure Storage Account access key", f"AccountName=acme;{azure};", azure),
        ("discord", "Discord Bot Token", f"DISCORD={discord}", discord),
        ("mailchimp", "Mailchimp Access Key", f"MAILCHIMP={mailchimp}", mailchimp),
        ("openai", "OpenAI Token", f"OPENAI={openai}", openai),
        ("basic_auth", "Basic Auth Credentials",
         f"DATABASE_URL=postgres://svc:{password}@db.internal:5432/app", password),
        ("telegram", "Telegram Bot Token", f"TELEGRAM={telegram}", telegram),
        ("square", "Square OAuth Secret", f"SQUARE={square}", square),
        ("artifactory", "Artifactory Credentials", f"artifactory: {artifactory} ", artifactory),
        ("ibm_iam", "IBM Cloud IAM Key", f"ibm_cloud_iam_api_key = '{ibm_iam}'", ibm_iam),
        ("ibm_cos", "IBM COS HMAC Credentials", f"cos_hmac_secret_access_key = '{cos}'", cos),
        ("softlayer", "SoftLayer Credentials", f'softlayer_api_key = "{softlayer}"', softlayer),
        ("cloudant", "Cloudant Credentials", f'cloudant_password="{cloudant}"', cloudant),
    )]



CASES = make_cases(20261201)
