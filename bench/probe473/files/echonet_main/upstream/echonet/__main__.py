"""Entry point for command line."""

import click

import echonet


@click.group()
def main():
    """Entry point for command line."""
    pass


main.add_command(echonet.utils.segmentation.run)
main.add_command(echonet.utils.video.run)


if __name__ == '__main__':
    main()
