# canasta-server in a container (docs/operating.md).
#   docker build -t canasta-server .
#   docker run -d --name canasta -p 7437:7437 -v canasta-data:/data canasta-server
# The data (keys, SQLite database) live on the volume at /data; settings come from
# CANASTA_SERVER_* environment variables (docker run -e ...) or a mounted server.toml
# (-e CANASTA_SERVER_CONFIG=/data/server.toml).

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY shared shared
COPY server server
COPY client client
RUN pip wheel --no-cache-dir --wheel-dir /wheels '.[postgres]'

FROM python:3.11-slim
RUN useradd --system --uid 10001 --home-dir /data canasta \
    && mkdir /data && chown canasta:canasta /data && chmod 0700 /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER canasta
VOLUME /data
ENV CANASTA_SERVER_DATA_DIR=/data \
    CANASTA_SERVER_LISTEN=0.0.0.0:7437
EXPOSE 7437
HEALTHCHECK --interval=30s --timeout=10s --start-period=20s --retries=3 \
    CMD ["python", "-m", "server.health"]
ENTRYPOINT ["canasta-server"]
CMD ["serve"]
