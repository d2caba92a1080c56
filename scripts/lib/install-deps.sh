# shellcheck shell=bash
# install_deps: make sure the Debian 12 packages Tidemark builds and tests with are installed.
# Fast when nothing is missing (one dpkg-query call, no apt-get update).
# Source it after common.sh.

# Everything the build, the tests and the throwaway servers need.
TIDEMARK_APT_PACKAGES=(
    mariadb-server mariadb-client libmariadb-dev zlib1g-dev libzstd-dev
    postgresql postgresql-contrib libpq-dev
    librdkafka-dev kcat
    libspdlog-dev libfmt-dev libyaml-cpp-dev libgtest-dev libgmock-dev
    nlohmann-json3-dev libcli11-dev libsystemd-dev libbenchmark-dev prometheus-cpp-dev libcpp-httplib-dev
    cmake g++ pkg-config ninja-build clang-14 libclang-rt-14-dev
    maven openjdk-17-jre-headless
    python3 ca-certificates
)

# Packages that are skipped when the commands they provide are already on PATH
# (e.g. a JDK and Maven installed some other way).
_java_tools_present() {
    command -v mvn >/dev/null 2>&1 && command -v java >/dev/null 2>&1
}

# Prints the packages of "$@" that are not installed.
missing_packages() {
    local pkg status
    for pkg in "$@"; do
        status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)"
        [[ "$status" == "installed" ]] || printf '%s\n' "$pkg"
    done
}

install_deps() {
    local -a wanted=() missing=()
    local pkg
    for pkg in "${TIDEMARK_APT_PACKAGES[@]}"; do
        case "$pkg" in
            maven | openjdk-17-jre-headless)
                _java_tools_present && continue
                ;;
        esac
        wanted+=("$pkg")
    done

    mapfile -t missing < <(missing_packages "${wanted[@]}")
    if ((${#missing[@]} == 0)); then
        log_info "all ${#wanted[@]} required packages are installed"
        return 0
    fi

    is_root || die "missing packages (${missing[*]}) and not root: install them with apt-get as root"
    log_info "installing ${#missing[@]} missing packages: ${missing[*]}"
    local start
    start="$(now_s)"
    _apt_install "${missing[@]}"
    log_info "packages installed in $(elapsed_since "$start")s"

    mapfile -t missing < <(missing_packages "${wanted[@]}")
    ((${#missing[@]} == 0)) || die "still missing after apt-get install: ${missing[*]}"
}

# apt-get update + install, with service autostart blocked for the duration when the machine has
# no policy-rc.d of its own (the postinst scripts of mariadb-server and postgresql would otherwise
# start the distribution's own servers on 3306/5432, which we never use).
_apt_install() {
    local policy=/usr/sbin/policy-rc.d added_policy=0
    if [[ ! -e "$policy" ]]; then
        printf '#!/bin/sh\n# temporary, written by tidemark install-deps.sh\nexit 101\n' >"$policy"
        chmod 0755 "$policy"
        added_policy=1
    fi
    local rc=0 apt_log
    apt_log="$(mktemp /tmp/tidemark-apt.XXXXXX.log)"
    {
        DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
    } >"$apt_log" 2>&1 || rc=$?
    if ((added_policy)); then
        rm -f "$policy"
    fi
    if ((rc != 0)); then
        show_log_tail "$apt_log" 40
        die "apt-get failed (exit $rc); full output in $apt_log"
    fi
    rm -f "$apt_log"
}
